"""Session 31, call 2 (the host CPU only): what one piece of 4,096 updates costs the GPU
engine's host path, serial and over numba threads. Microseconds per piece, best of 200:
``admit``, its id lookups alone, ``encode_updates``; then the lookups and the encoding
split over 1..16 threads (prange), and an empty prange launch. Then admit + encode against
one fused pass (admit and encode in one loop), ns per update over 28,900 deletions, best
of 7. Deletions of existing edges over a path graph of VERTICES vertices, as the oracle
rows' deletion streams.

    python3 -P bench/results/gpu/session31/call2/host_cpu.py [VERTICES]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numba
import numpy as np
from numba import njit, prange

from dcsm.engine.idtable import IdTable, get, prefetch, table_shift
from dcsm.engine.intern import _AHEAD, _new_vertex, admit
from dcsm.gpu.rings import _pair, encode_updates
from dcsm.model import OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP, OUTCOME_SELF_LOOP, UpdateBatch

PIECE = 4096


@njit(cache=True, nogil=True)
def lookups(u, v, slots, a_out, b_out):  # type: ignore[no-untyped-def]
    shift = table_shift(slots)
    for i in range(u.shape[0]):
        a_out[i] = get(slots, shift, u[i])
        b_out[i] = get(slots, shift, v[i])


@njit(cache=True, nogil=True, parallel=True)
def lookups_par(u, v, slots, a_out, b_out, nt):  # type: ignore[no-untyped-def]
    shift = table_shift(slots)
    n = u.shape[0]
    for t in prange(nt):
        for i in range(t * n // nt, (t + 1) * n // nt):
            a_out[i] = get(slots, shift, u[i])
            b_out[i] = get(slots, shift, v[i])


@njit(cache=True, nogil=True, parallel=True)
def encode_par(out, op, ia, ib, elabel, u, v, u_label, v_label, vlab, known, ts, now_ns, nt):  # type: ignore[no-untyped-def]
    n = op.shape[0]
    for t in prange(nt):
        for k in range(t * n // nt, (t + 1) * n // nt):
            x, y = ia[k], ib[k]
            a_label = u_label[k] if u_label[k] >= 0 else (vlab[x] if x >= known else -1)
            b_label = v_label[k] if v_label[k] >= 0 else (vlab[y] if y >= known else -1)
            out[k, 0] = _pair(1 if op[k] > 0 else 2, x)
            out[k, 1] = _pair(y, elabel[k])
            out[k, 2] = _pair(a_label, b_label)
            out[k, 3] = u[k]
            out[k, 4] = v[k]
            out[k, 5] = np.int64(ts[k] * 1e9) if ts[k] > 0 else now_ns


@njit(parallel=True, nogil=True)
def empty_par(nt, x):  # type: ignore[no-untyped-def]
    for t in prange(nt):
        x[t] += 1


@njit(cache=True, nogil=True)
def admit_encode(op, u, v, u_label, v_label, elabel, ts, now_ns, slots, ext, vlab, meta, outcome,  # type: ignore[no-untyped-def]
                 a_out, b_out, out):  # fmt: skip
    """admit's two passes with encode_updates' record written in the second (into ``out``,
    rows in admission order); returns how many were admitted."""
    shift = table_shift(slots)
    n = op.shape[0]
    for i in range(min(_AHEAD, n)):
        prefetch(slots, shift, u[i])
        prefetch(slots, shift, v[i])
    for i in range(n):
        if i + _AHEAD < n:
            prefetch(slots, shift, u[i + _AHEAD])
            prefetch(slots, shift, v[i + _AHEAD])
        a_out[i] = get(slots, shift, u[i])
        b_out[i] = get(slots, shift, v[i])
    n0 = meta[0]
    j = 0
    for i in range(n):
        x, y, ix, iy = u[i], v[i], a_out[i], b_out[i]
        a_out[i] = -1
        b_out[i] = -1
        if x == y:
            outcome[i] = OUTCOME_SELF_LOOP
            continue
        if meta[0] > n0:
            ix = get(slots, shift, x) if ix < 0 else ix
            iy = get(slots, shift, y) if iy < 0 else iy
        lx, ly = u_label[i], v_label[i]
        if (lx >= 0 and ix >= 0 and vlab[ix] != lx) or (ly >= 0 and iy >= 0 and vlab[iy] != ly):
            outcome[i] = OUTCOME_LABEL_CONFLICT
            continue
        if ix < 0 or iy < 0:
            if op[i] < 0:
                outcome[i] = OUTCOME_NOOP
                continue
            if ix < 0:
                ix = _new_vertex(slots, shift, x, lx, ext, vlab, meta)
            if iy < 0:
                iy = _new_vertex(slots, shift, y, ly, ext, vlab, meta)
        a_out[i], b_out[i], outcome[i] = ix, iy, 1
        out[j, 0] = _pair(1 if op[i] > 0 else 2, ix)
        out[j, 1] = _pair(iy, elabel[i])
        out[j, 2] = _pair(lx if lx >= 0 else (vlab[ix] if ix >= n0 else -1),
                          ly if ly >= 0 else (vlab[iy] if iy >= n0 else -1))  # fmt: skip
        out[j, 3] = x
        out[j, 4] = y
        out[j, 5] = np.int64(ts[i] * 1e9) if ts[i] > 0 else now_ns
        j += 1
    return j


def setup(vertices: int, updates: int) -> tuple:  # type: ignore[type-arg]
    """An id table holding a path over ``vertices`` vertices, and a power-law stream of
    ``updates`` deletions over them."""
    rng = np.random.default_rng(0)
    ids = IdTable()
    ids.ensure(vertices + 2 * updates)
    ext = np.zeros(vertices + 2 * updates, np.int64)
    vlab = np.zeros(vertices + 2 * updates, np.int32)
    meta = np.zeros(1, np.int64)
    path = UpdateBatch.from_arrays(np.ones(vertices - 1), np.arange(vertices - 1),
                                   np.arange(1, vertices))  # fmt: skip
    k = len(path)
    admit(path.op, path.u, path.v, path.u_label, path.v_label, ids.slots, ext, vlab, meta,
          np.zeros(k, np.int8), np.zeros(k, np.int32), np.zeros(k, np.int32))  # fmt: skip
    u = np.minimum((rng.pareto(1.3, updates) * 50).astype(np.int64), vertices - 1)
    v = rng.integers(0, vertices, updates)
    v = np.where(v == u, (v + 1) % vertices, v)
    return ids, ext, vlab, meta, UpdateBatch.from_arrays(-np.ones(updates), u, v, first_seq=1)


def best_us(f: Callable[[], object], reps: int = 200) -> float:
    best = 1e9
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return round(best * 1e6, 1)


def stream_ns(fused: bool, vertices: int, updates: int = 28_900) -> float:
    """ns per update to admit and encode a stream piece by piece."""
    ids, ext, vlab, meta, batch = setup(vertices, updates)
    n = len(batch)
    outcome, a, b = np.zeros(n, np.int8), np.zeros(n, np.int32), np.zeros(n, np.int32)
    ring = np.zeros((1 << 16, 6), np.int64)
    t0 = time.perf_counter()
    for lo in range(0, n, PIECE):
        s = slice(lo, min(n, lo + PIECE))
        rows = ring[lo : s.stop]
        if fused:
            admit_encode(batch.op[s], batch.u[s], batch.v[s], batch.u_label[s], batch.v_label[s],
                         batch.label[s], batch.ts[s], time.time_ns(), ids.slots, ext, vlab, meta,
                         outcome[s], a[s], b[s], rows)  # fmt: skip
        else:
            known = int(meta[0])
            admit(batch.op[s], batch.u[s], batch.v[s], batch.u_label[s], batch.v_label[s],
                  ids.slots, ext, vlab, meta, outcome[s], a[s], b[s])  # fmt: skip
            encode_updates(rows, batch.op[s], a[s], b[s], batch.label[s], batch.u[s], batch.v[s],
                           batch.u_label[s], batch.v_label[s], vlab, known, batch.ts[s],
                           time.time_ns())  # fmt: skip
    return round((time.perf_counter() - t0) * 1e9 / n, 2)


def main() -> None:
    vertices = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    ids, ext, vlab, meta, batch = setup(vertices, 28_900)
    s = slice(0, PIECE)
    a, b = np.zeros(PIECE, np.int32), np.zeros(PIECE, np.int32)
    oc, out, x = np.zeros(PIECE, np.int8), np.zeros((PIECE, 6), np.int64), np.zeros(64)
    nt_all = numba.get_num_threads()
    empty_par(nt_all, x)
    print(f"{vertices:,} vertices; {nt_all} numba threads, layer {numba.threading_layer()}")
    ends = (batch.op[s], batch.u[s], batch.v[s], batch.u_label[s], batch.v_label[s])
    print("admit us", best_us(lambda: admit(*ends, ids.slots, ext, vlab, meta, oc, a, b)))
    print("lookups us", best_us(lambda: lookups(batch.u[s], batch.v[s], ids.slots, a, b)))

    def enc(nt: int = 0) -> None:
        args = (out, batch.op[s], a, b, batch.label[s], batch.u[s], batch.v[s], batch.u_label[s],
                batch.v_label[s], vlab, 0, batch.ts[s], 5)  # fmt: skip
        encode_par(*args, nt) if nt else encode_updates(*args)

    print("encode us", best_us(enc))
    for nt in sorted({1, 2, 4, 8, 16, nt_all}):
        if nt <= nt_all:
            numba.set_num_threads(nt)
            print(nt, "threads: empty_par us", best_us(lambda nt=nt: empty_par(nt, x)),
                  "lookups_par us", best_us(lambda nt=nt: lookups_par(batch.u[s], batch.v[s],
                                                                      ids.slots, a, b, nt)),
                  "encode_par us", best_us(lambda nt=nt: enc(nt)))  # fmt: skip
    stream_ns(False, 1000, 5000)
    stream_ns(True, 1000, 5000)  # compiled
    print("admit + encode, ns an update:", min(stream_ns(False, vertices) for _ in range(7)),
          "fused:", min(stream_ns(True, vertices) for _ in range(7)))  # fmt: skip


if __name__ == "__main__":
    main()
