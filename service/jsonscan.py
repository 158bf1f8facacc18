"""A compiled scanner for the common shape of JSON update records: one flat EdgeUpdate
object, or an array of them, with plain numbers and the strings ``"insert"``/``"delete"``.

:func:`scan_updates` turns such a record into columns in one pass over its bytes (tens of
nanoseconds an update, no Python object per update). It accepts only what it fully
understands and is certainly valid; anything else (escapes in strings, unknown or repeated
keys, floats where ints belong, out-of-range values, a self loop, trailing garbage) makes it
return None, and the caller falls back to the exact parser (orjson + the pydantic model),
which then names the problem. So the scanner decides nothing the model would decide
differently; it only skips the work for records the model would accept as they are.

``ts`` is parsed as integer and fraction digits (``int + frac / 10**k``), which is within one
unit in the last place of the correctly rounded value, and the same on every replay.
"""

from __future__ import annotations

import numba
import numpy as np

from dcsm.model import ANY_LABEL, MAX_LABEL, UpdateBatch

# Key ids.
_OP, _U, _V, _LABEL, _ULABEL, _VLABEL, _TS = range(7)
_KEYS = [b"op", b"u", b"v", b"label", b"u_label", b"v_label", b"ts"]
_KEY_BYTES = np.zeros((7, 8), np.uint8)
_KEY_LEN = np.zeros(7, np.int64)
for _i, _k in enumerate(_KEYS):
    _KEY_BYTES[_i, : len(_k)] = np.frombuffer(_k, np.uint8)
    _KEY_LEN[_i] = len(_k)
_INSERT = np.frombuffer(b"insert", np.uint8).copy()
_DELETE = np.frombuffer(b"delete", np.uint8).copy()
_MAX_INT = 2**63 - 1


@numba.njit(cache=True, nogil=True)
def _ws(b: np.ndarray, i: int) -> int:
    n = len(b)
    while i < n and (b[i] == 32 or b[i] == 10 or b[i] == 13 or b[i] == 9):
        i += 1
    return i


@numba.njit(cache=True, nogil=True)
def _key(b: np.ndarray, i: int, kb: np.ndarray, kl: np.ndarray) -> tuple[int, int]:
    """At an opening quote: (key id or -1, index after the closing quote)."""
    j = i + 1
    n = len(b)
    while j < n and b[j] != 34:
        if b[j] == 92:  # backslash: leave escapes to the exact parser
            return -1, j
        j += 1
    if j >= n:
        return -1, j
    length = j - i - 1
    for k in range(7):
        if kl[k] != length:
            continue
        same = True
        for t in range(length):
            if b[i + 1 + t] != kb[k, t]:
                same = False
                break
        if same:
            return k, j + 1
    return -1, j + 1


@numba.njit(cache=True, nogil=True)
def _int(b: np.ndarray, i: int) -> tuple[bool, int, int]:
    """A plain integer (no fraction, no exponent): (ok, value, next index)."""
    n = len(b)
    neg = i < n and b[i] == 45
    ok, value, i = _int_part(b, i + 1 if neg else i)
    if not ok or (i < n and (b[i] == 46 or b[i] == 101 or b[i] == 69)):
        return False, 0, i
    return True, -value if neg else value, i


@numba.njit(cache=True, nogil=True)
def _float(b: np.ndarray, i: int) -> tuple[bool, float, int]:
    """A non-negative decimal without exponent: (ok, value, next index)."""
    ok, whole, i = _int_part(b, i)
    if not ok:
        return False, 0.0, i
    n = len(b)
    value = float(whole)
    if i < n and b[i] == 46:
        i += 1
        start = i
        frac = 0
        while i < n and 48 <= b[i] <= 57:
            if i - start >= 17:
                return False, 0.0, i
            frac = frac * 10 + (b[i] - 48)
            i += 1
        if i == start:
            return False, 0.0, i
        value = value + frac / 10.0 ** (i - start)
    if i < n and (b[i] == 101 or b[i] == 69):
        return False, 0.0, i
    return True, value, i


@numba.njit(cache=True, nogil=True)
def _int_part(b: np.ndarray, i: int) -> tuple[bool, int, int]:
    """Digits without sign or leading zero, at most 18 (more: left to the exact parser)."""
    n = len(b)
    start = i
    value = 0
    while i < n and 48 <= b[i] <= 57:
        if i - start >= 18:
            return False, 0, i
        value = value * 10 + (b[i] - 48)
        i += 1
    if i == start or (i - start > 1 and b[start] == 48):
        return False, 0, i
    return True, value, i


@numba.njit(cache=True, nogil=True)
def _null(b: np.ndarray, i: int) -> bool:
    return (
        i + 4 <= len(b) and b[i] == 110 and b[i + 1] == 117 and b[i + 2] == 108 and b[i + 3] == 108
    )


@numba.njit(cache=True, nogil=True)
def _word(b: np.ndarray, i: int, w: np.ndarray) -> bool:
    """The quoted string ``w`` starts at ``i`` (an opening quote)."""
    n = len(w)
    if i + n + 2 > len(b) or b[i + n + 1] != 34:
        return False
    for t in range(n):
        if b[i + 1 + t] != w[t]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _scan(
    b: np.ndarray,
    kb: np.ndarray,
    kl: np.ndarray,
    ins: np.ndarray,
    dele: np.ndarray,
    max_label: int,
    out_i: np.ndarray,
    out_ts: np.ndarray,
) -> int:
    """Fill out_i (6, cap) int64 rows op, u, v, label, u_label, v_label and out_ts (cap,);
    the number of updates, or -1 when the record needs the exact parser."""
    n = len(b)
    cap = out_ts.shape[0]
    i = _ws(b, 0)
    if i >= n:
        return -1
    array = b[i] == 91
    if array:
        i = _ws(b, i + 1)
        if i < n and b[i] == 93:
            i = _ws(b, i + 1)
            return 0 if i == n else -1
    count = 0
    while True:
        if i >= n or b[i] != 123 or count >= cap:
            return -1
        i = _ws(b, i + 1)
        seen = 0
        op = 0
        u = -1
        v = -1
        label = 0
        ul = -1
        vl = -1
        ts = 0.0
        if i < n and b[i] == 125:
            return -1  # {} lacks op, u, v
        while True:
            if i >= n or b[i] != 34:
                return -1
            k, i = _key(b, i, kb, kl)
            if k < 0 or (seen >> k) & 1:
                return -1
            seen |= 1 << k
            i = _ws(b, i)
            if i >= n or b[i] != 58:
                return -1
            i = _ws(b, i + 1)
            if k == _OP:
                if _word(b, i, ins):
                    op = 1
                    i += 8
                elif _word(b, i, dele):
                    op = -1
                    i += 8
                else:
                    return -1
            elif _null(b, i):
                if k == _U or k == _V:
                    return -1
                i += 4
            elif k == _TS:
                ok, ts, i = _float(b, i)
                if not ok:
                    return -1
            else:
                ok, x, i = _int(b, i)
                if not ok or x < 0:
                    return -1
                if k == _U:
                    u = x
                elif k == _V:
                    v = x
                else:
                    if x > max_label:
                        return -1
                    if k == _LABEL:
                        label = x
                    elif k == _ULABEL:
                        ul = x
                    else:
                        vl = x
            i = _ws(b, i)
            if i < n and b[i] == 44:
                i = _ws(b, i + 1)
                continue
            if i < n and b[i] == 125:
                i += 1
                break
            return -1
        if op == 0 or u < 0 or v < 0 or u == v:
            return -1
        out_i[0, count] = op
        out_i[1, count] = u
        out_i[2, count] = v
        out_i[3, count] = label
        out_i[4, count] = ul
        out_i[5, count] = vl
        out_ts[count] = ts
        count += 1
        i = _ws(b, i)
        if not array:
            return count if i == n else -1
        if i < n and b[i] == 44:
            i = _ws(b, i + 1)
            continue
        if i < n and b[i] == 93:
            i = _ws(b, i + 1)
            return count if i == n else -1
        return -1


def scan_updates(value: bytes, max_updates: int) -> UpdateBatch | None:
    """The updates of a JSON record in the common shape, or None (see the module docstring).
    A record of more than ``max_updates`` updates also gives None (the exact path reports
    it as oversize)."""
    buf = np.frombuffer(value, np.uint8)
    cap = min(max_updates, len(value) // 20 + 1)  # an update takes at least 20 bytes
    out_i = np.empty((6, cap), np.int64)
    out_ts = np.empty(cap, np.float64)
    k = _scan(buf, _KEY_BYTES, _KEY_LEN, _INSERT, _DELETE, MAX_LABEL, out_i, out_ts)
    if k < 0:
        return None
    return UpdateBatch.from_arrays(
        out_i[0, :k], out_i[1, :k], out_i[2, :k], out_i[3, :k], ts=out_ts[:k],
        u_label=out_i[4, :k], v_label=out_i[5, :k],
    )  # fmt: skip


def warm() -> None:
    """Compile (or load from numba's cache) before the first real record."""
    scan_updates(b'[{"op":"insert","u":1,"v":2,"ts":1.5}]', 10)


assert ANY_LABEL == -1  # the scanner writes -1 for a vertex label that is not given
