"""Input records (Kafka values on ``dcsm.updates``, HTTP bodies) to update columns.

Two encodings:

* **JSON**: one :class:`~dcsm.schemas.EdgeUpdate` object, or a JSON array of them. Parsed
  by a compiled scanner straight into columns when the record has the common shape
  (:mod:`dcsm.service.jsonscan`); any other record is parsed with orjson and validated element
  by element with the pydantic model, so every bad element gets its exact error.
* **Binary batch** (for high rates): a 12-byte header, then ``count`` packed little-endian
  records of :data:`RECORD_DTYPE` (37 bytes each)::

      offset  size  field
      0       4     magic  b"DCSB"
      4       1     version (1)
      5       3     reserved, zero
      8       4     count  uint32 LE
      12      37*n  records: op int8 (+1 insert, -1 delete), u int64, v int64, label int32,
                    u_label int32, v_label int32 (-1: not given), ts float64 (0: not given)

  ``np.frombuffer(value, RECORD_DTYPE, count, offset=12)`` reads it; :func:`encode_binary`
  writes it.

:func:`encode_binary` and :func:`encode_json` are the one implementation of both encodings
that every producer here uses (``dcsm.client.UpdateProducer``, the load generator, the demo).

Decoding never raises for bad input: every failure becomes a :class:`RecordError` with a
short ``reason`` (``malformed``, ``oversize``, ``unknown_op``, ``self_loop``, ``invalid``) and,
for an element of a batch, its ``index``; the valid elements still go through.

The decoded batch's ``ts`` column holds each update's own producer timestamp (``ts``), 0
where the producer gave none; ingest fills those with the record's timestamp.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
from pydantic import ValidationError

from dcsm.model import ANY_LABEL, MAX_LABEL, OP_DELETE, OP_INSERT, UpdateBatch
from dcsm.schemas import EdgeUpdate, to_batch

from .errors import RecordError
from .jsonscan import scan_updates

MAGIC = b"DCSB"
VERSION = 1
HEADER = struct.Struct("<4sB3xI")
RECORD_DTYPE = np.dtype(
    [
        ("op", "i1"), ("u", "<i8"), ("v", "<i8"), ("label", "<i4"),
        ("u_label", "<i4"), ("v_label", "<i4"), ("ts", "<f8"),
    ]
)  # fmt: skip


@dataclass
class Decoded:
    """What one input record yields.

    Attributes:
        updates: the valid updates in record order (seqs are placeholders; ``ts`` the
            producer's timestamps, 0 where not given).
        index: int32 (n,); position of each valid update inside the record.
        errors: one RecordError per rejected element (or one for the whole record).
    """

    updates: UpdateBatch
    index: np.ndarray
    errors: list[RecordError] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.updates)


_EMPTY = UpdateBatch.from_arrays(np.zeros(0), np.zeros(0), np.zeros(0))


def _empty(errors: list[RecordError]) -> Decoded:
    return Decoded(_EMPTY, np.zeros(0, np.int32), errors)


def merge(parts: Sequence[UpdateBatch]) -> UpdateBatch:
    """Concatenate decoded updates into one batch (seqs are placeholders)."""
    if len(parts) == 1:
        return parts[0]
    return UpdateBatch.concat(list(parts))  # [] -> empty


def validation_details(errors: Sequence[Any]) -> list[dict[str, str]]:
    """Pydantic error dicts as ``{"field", "reason", "type"}`` rows (``edges[0].u``).

    A pattern error raised by QuerySpec's validator carries its own field in the context.
    """
    rows = []
    for err in errors:
        loc = list(err.get("loc", ()))
        ctx = err.get("ctx") or {}
        path = ""
        for part in loc:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        reason = str(err.get("msg", "invalid"))
        if err.get("type") == "pattern" and "field" in ctx:
            path = str(ctx["field"])
            reason = str(ctx["reason"])
        rows.append({"field": path or "body", "reason": reason, "type": str(err.get("type"))})
    return rows


def json_error_position(doc: str | bytes, pos: int) -> str:
    """``"line L, column C"`` (both from 1) of character offset ``pos`` in ``doc``."""
    if isinstance(doc, bytes):
        doc = doc.decode("utf-8", "replace")
    pos = max(0, min(pos, len(doc)))
    line = doc.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - doc.rfind(chr(10), 0, pos)}"


def _element_error(exc: ValidationError, index: int | None) -> RecordError:
    details = validation_details(exc.errors(include_url=False))
    types = {d["type"] for d in details}
    if "self_loop" in types:
        reason = "self_loop"
    elif any(d["field"] == "op" for d in details):
        reason = "unknown_op"
    else:
        reason = "invalid"
    message = "; ".join(f"{d['field']}: {d['reason']}" for d in details)
    return RecordError(reason, message, index)


def decode_json(value: bytes, max_updates: int) -> Decoded:
    """A JSON record: one update object or an array of them."""
    fast = scan_updates(value, max_updates)
    if fast is not None:
        return Decoded(fast, np.arange(len(fast), dtype=np.int32), [])
    try:
        obj: Any = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        return _empty([RecordError("malformed", f"not valid JSON: {where}: {exc.msg}")])
    single = isinstance(obj, dict)
    if single:
        items = [obj]
    elif isinstance(obj, list):
        items = obj
    else:
        return _empty(
            [
                RecordError(
                    "malformed",
                    f"a record must be a JSON object or array, not {type(obj).__name__}",
                )
            ]
        )
    if len(items) > max_updates:
        return _empty(
            [RecordError("oversize", f"{len(items)} updates in one record; at most {max_updates}")]
        )
    valid: list[EdgeUpdate] = []
    index: list[int] = []
    errors: list[RecordError] = []
    for i, item in enumerate(items):
        try:
            valid.append(EdgeUpdate.model_validate(item))
            index.append(i)
        except ValidationError as exc:
            errors.append(_element_error(exc, None if single else i))
    ts = np.array([x.ts or 0.0 for x in valid], np.float64)
    return Decoded(to_batch(valid, 0, ts), np.asarray(index, np.int32), errors)


def decode_binary(value: bytes, max_updates: int) -> Decoded:
    """A binary batch record (see the module docstring)."""
    if len(value) < HEADER.size:
        return _empty(
            [RecordError("malformed", f"binary batch shorter than its {HEADER.size}-byte header")]
        )
    magic, version, count = HEADER.unpack_from(value)
    if version != VERSION:
        return _empty(
            [RecordError("malformed", f"binary batch version {version}; expected {VERSION}")]
        )
    if count > max_updates:
        return _empty(
            [RecordError("oversize", f"{count} updates in one record; at most {max_updates}")]
        )
    expect = HEADER.size + count * RECORD_DTYPE.itemsize
    if len(value) != expect:
        return _empty(
            [
                RecordError(
                    "malformed",
                    f"binary batch of {count} records needs {expect} bytes, got {len(value)}",
                )
            ]
        )
    # A copy, not a view: a view of ``bytes`` is read-only, and numba compiles a separate
    # (seconds-long) specialisation of the engine kernels for read-only arrays.
    rec = np.frombuffer(value, RECORD_DTYPE, count, offset=HEADER.size).copy()
    op, u, v = rec["op"], rec["u"], rec["v"]
    ok = ((op == OP_INSERT) | (op == OP_DELETE)) & (u >= 0) & (v >= 0) & (u != v)
    ok &= (rec["label"] >= 0) & (rec["u_label"] >= ANY_LABEL) & (rec["v_label"] >= ANY_LABEL)
    if ok.all():  # the common case: one vectorised pass, no per-check bookkeeping
        batch = UpdateBatch.from_arrays(
            op, u, v, rec["label"], ts=_finite(rec["ts"]), u_label=rec["u_label"],
            v_label=rec["v_label"],
        )  # fmt: skip
        return Decoded(batch, np.arange(count, dtype=np.int32), [])
    checks = [
        ("unknown_op", (rec["op"] != OP_INSERT) & (rec["op"] != OP_DELETE), "op must be +1 or -1"),
        ("invalid", (rec["u"] < 0) | (rec["v"] < 0), "vertex ids must be >= 0"),
        ("invalid", (rec["label"] < 0) | (rec["label"] > MAX_LABEL), "edge label must be >= 0"),
        ("invalid", (rec["u_label"] < ANY_LABEL) | (rec["v_label"] < ANY_LABEL),
         "vertex labels must be >= 0 (or -1: not given)"),
        ("self_loop", rec["u"] == rec["v"], "u, v: self loop"),
    ]  # fmt: skip
    bad = np.zeros(count, bool)
    errors: list[RecordError] = []
    for reason, mask, message in checks:
        for i in np.flatnonzero(mask & ~bad).tolist():
            errors.append(RecordError(reason, f"{message} (record {i})", i))
        bad |= mask
    keep = np.flatnonzero(~bad).astype(np.int32)
    r = rec[keep]
    batch = UpdateBatch.from_arrays(
        r["op"], r["u"], r["v"], r["label"], ts=_finite(r["ts"]), u_label=r["u_label"],
        v_label=r["v_label"],
    )  # fmt: skip
    errors.sort(key=lambda e: e.index or 0)
    return Decoded(batch, keep, errors)


def _finite(ts: np.ndarray) -> np.ndarray:
    """Producer timestamps; a non-finite or negative one counts as not given (0)."""
    return np.where(np.isfinite(ts) & (ts > 0), ts, 0.0)


def decode_record(value: bytes | None, max_updates: int) -> Decoded:
    """Either encoding, told apart by the magic bytes."""
    if not value:
        return _empty([RecordError("malformed", "empty record")])
    if value[:4] == MAGIC:
        return decode_binary(value, max_updates)
    return decode_json(value, max_updates)


def encode_binary(batch: UpdateBatch, ts: np.ndarray | None = None) -> bytes:
    """A binary batch record of ``batch``'s updates (``ts``: float64 (n,) producer times)."""
    n = len(batch)
    rec = np.zeros(n, RECORD_DTYPE)
    for name in ("op", "u", "v", "label", "u_label", "v_label"):
        rec[name] = getattr(batch, name)
    if ts is not None:
        rec["ts"] = ts
    return HEADER.pack(MAGIC, VERSION, n) + rec.tobytes()


def json_rows(batch: UpdateBatch) -> list[str]:
    """Each update as an EdgeUpdate JSON object *without its closing brace* (so a ``ts`` can
    still be appended, see :func:`close_rows`), vertex labels only where given."""
    ops = np.where(batch.op == OP_INSERT, '{"op":"insert","u":', '{"op":"delete","u":')
    rows = []
    cols = zip(ops.tolist(), batch.u.tolist(), batch.v.tolist(), batch.label.tolist(),
               batch.u_label.tolist(), batch.v_label.tolist(), strict=True)  # fmt: skip
    for op, u, v, lab, ul, vl in cols:
        s = f'{op}{u},"v":{v},"label":{lab}'
        if ul != ANY_LABEL:
            s += f',"u_label":{ul}'
        if vl != ANY_LABEL:
            s += f',"v_label":{vl}'
        rows.append(s)
    return rows


def close_rows(rows: Sequence[str], ts: Sequence[float] | None = None) -> list[str]:
    """:func:`json_rows` texts closed, each with its ``ts`` (epoch seconds) when given."""
    if ts is None:
        return [row + "}" for row in rows]
    return [f'{row},"ts":{t:.6f}}}' for row, t in zip(rows, ts, strict=True)]


def encode_json(batch: UpdateBatch, ts: np.ndarray | None = None) -> bytes:
    """A JSON record (an array of EdgeUpdate objects) of ``batch``'s updates (``ts``:
    float64 (n,) producer times)."""
    items = close_rows(json_rows(batch), None if ts is None else ts.tolist())
    return ("[" + ",".join(items) + "]").encode()


def encode_json_updates(batch: UpdateBatch) -> list[dict[str, Any]]:
    """``batch`` as EdgeUpdate-shaped dicts (vertex labels only where given)."""
    rows = []
    for op, u, v, lab, ul, vl in zip(
        batch.op.tolist(), batch.u.tolist(), batch.v.tolist(), batch.label.tolist(),
        batch.u_label.tolist(), batch.v_label.tolist(), strict=True,
    ):  # fmt: skip
        row: dict[str, Any] = {"op": "insert" if op == OP_INSERT else "delete", "u": u, "v": v}
        row["label"] = lab
        if ul != ANY_LABEL:
            row["u_label"] = ul
        if vl != ANY_LABEL:
            row["v_label"] = vl
        rows.append(row)
    return rows
