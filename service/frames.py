"""Output frames (websocket text frames and ``dcsm.matches`` values) and their stable ids.

Two encodings, chosen per query for ``dcsm.matches`` (``"encoding"`` at registration) and per
websocket subscriber (``?encoding=``):

* ``json`` (the default): one frame per delta, in the :class:`~dcsm.schemas.MatchDelta` shape
  ``{"query", "sign", "seq", "match", "arrival_ts", "emitted_ts", "id"}``, and one
  ``{"type": "count", "query", "seq", "sign", "count", "arrival_ts", "emitted_ts", "id"}``
  frame per update and sign with a non-zero count.
* ``batch``: one frame per engine batch and query, the same fields as parallel arrays::

      {"type": "deltas", "query": "tri", "seq": [..], "sign": [..], "match": [[..], ..],
       "ids": "0f3a...", "arrival_ts": [..], "emitted_ts": 1732280000.123456}
      {"type": "counts", "query": "tri", "seq": [..], "sign": [..], "count": [..],
       "ids": "0f3a...", "arrival_ts": [..], "emitted_ts": 1732280000.123456}

  ``ids`` is one string of 16 hex digits per row (row i is ``ids[16*i : 16*i + 16]``): a
  million rows cost one string, not a million. A batch covers whatever the engine applied
  in one call, so its boundaries depend on load: deduplicate by row id, never by frame.

  A batch frame holds at most ``FRAME_ROWS`` (8,192) rows; a larger batch is several frames.

**Overflow.** An embeddings-mode query ships at most ``max_deltas_per_update`` deltas per
update (its registration's, else the service's ``--max-deltas-per-update``). For an update
with more, the deltas of the engine batch that carried it are followed by one overflow row
saying how many were left out (``shipped`` + ``not_shipped`` is the exact number of matches)::

      {"type": "overflow", "query": "p7", "seq": 42, "sign": 1, "shipped": 10000,
       "not_shipped": 928186, "arrival_ts": .., "emitted_ts": .., "id": "9c1e..."}    (json)
      {"type": "overflows", "query": "p7", "seq": [..], "sign": [..], "shipped": [..],
       "not_shipped": [..], "ids": "9c1e...", "arrival_ts": [..], "emitted_ts": ..}  (batch)

Count-mode queries and ``/counts`` are never capped: their counts include what was not
shipped. Backfill is capped the same way (one overflow row at ``from_seq``).

Backfill frames add ``"backfill": true``; ``{"type": "gap" | "end"}`` frames are control.

Stable ids
----------
Every delta and count carries ``id``: 16 hex digits of a 64-bit hash of (query name, kind,
seq, sign, match or nothing, backfill). An update replayed after a crash gets the same seq, so
its frames get the same ids: a consumer deduplicates exactly by ``id`` (per query). The hash
is splitmix64's finaliser folded over those fields, seeded with the first 8 bytes of the
BLAKE2b digest of the UTF-8 query name.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

import numpy as np
import orjson

Encoding = Literal["json", "batch"]
ENCODINGS: tuple[Encoding, ...] = ("json", "batch")

_KIND_DELTA = np.uint64(0x64656C7461)  # "delta"
_KIND_COUNT = np.uint64(0x636F756E74)  # "count"
_KIND_OVERFLOW = np.uint64(0x6F766572666C6F77)  # "overflow"
FRAME_ROWS = 8192  # most rows in one batch frame (and deltas encoded between two yields)
_BACKFILL = np.uint64(0x6261636B66696C6C)  # "backfill"
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element-wise on uint64 (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _fold(h: np.ndarray, column: np.ndarray) -> np.ndarray:
    return _mix((h + _GOLDEN) ^ column.astype(np.int64).view(np.uint64))


def _seed(name: str, kind: np.uint64, k: int, backfill: bool) -> np.ndarray:
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    h = np.full(k, np.frombuffer(digest, "<u8")[0] ^ kind, np.uint64)
    return _mix(h ^ _BACKFILL) if backfill else h


def delta_ids(
    name: str, seq: np.ndarray, sign: np.ndarray, match: np.ndarray, backfill: bool = False
) -> np.ndarray:
    """uint64 (k,) ids of deltas: seq int64 (k,), sign int8 (k,), match int64 (k, n)."""
    with np.errstate(over="ignore"):
        h = _fold(_fold(_seed(name, _KIND_DELTA, len(seq), backfill), seq), sign)
        for j in range(match.shape[1]):
            h = _fold(h, match[:, j])
    return h


def count_ids(name: str, seq: np.ndarray, sign: np.ndarray, backfill: bool = False) -> np.ndarray:
    """uint64 (k,) ids of per-update counts."""
    with np.errstate(over="ignore"):
        return _fold(_fold(_seed(name, _KIND_COUNT, len(seq), backfill), seq), sign)


def overflow_ids(
    name: str, seq: np.ndarray, sign: np.ndarray, backfill: bool = False
) -> np.ndarray:
    """uint64 (k,) ids of overflow rows (one per update and query at most)."""
    with np.errstate(over="ignore"):
        return _fold(_fold(_seed(name, _KIND_OVERFLOW, len(seq), backfill), seq), sign)


def hex_ids(ids: np.ndarray) -> str:
    """The uint64 ids as one string, 16 lowercase hex digits each."""
    return ids.astype(">u8").tobytes().hex()


def split_ids(text: str) -> list[str]:
    """:func:`hex_ids` back to one string per row."""
    return [text[i : i + 16] for i in range(0, len(text), 16)]


# -- json encoding: one frame per delta / count ---------------------------------------------


def delta_frames(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    match: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> tuple[list[str], list[str]]:
    """MatchDelta texts and their ids. sign int8 (k,), seq int64 (k,), match int64 (k, n)
    already cut to the query's n vertices, arrival float64 (k,)."""
    ids = split_ids(hex_ids(delta_ids(name, seq, sign, match, backfill)))
    qn = json.dumps(name)
    extra = ',"backfill":true' if backfill else ""
    texts = [
        f'{{"query":{qn},"sign":{s},"seq":{q},"match":[{",".join(map(str, m))}]{extra},'
        f'"arrival_ts":{a:.6f},"emitted_ts":{emitted:.6f},"id":"{i}"}}'
        for s, q, m, a, i in zip(
            sign.tolist(), seq.tolist(), match.tolist(), arrival.tolist(), ids, strict=True
        )
    ]
    return texts, ids


def count_frames(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    count: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> tuple[list[str], list[str]]:
    """Per-update count texts and their ids."""
    ids = split_ids(hex_ids(count_ids(name, seq, sign, backfill)))
    qn = json.dumps(name)
    extra = ',"backfill":true' if backfill else ""
    texts = [
        f'{{"type":"count","query":{qn},"sign":{s},"seq":{q},"count":{c}{extra},'
        f'"arrival_ts":{a:.6f},"emitted_ts":{emitted:.6f},"id":"{i}"}}'
        for s, q, c, a, i in zip(
            sign.tolist(), seq.tolist(), count.tolist(), arrival.tolist(), ids, strict=True
        )
    ]
    return texts, ids


def overflow_frames(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    shipped: np.ndarray,
    not_shipped: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> tuple[list[str], list[str]]:
    """Overflow texts and their ids: sign int8 (k,), seq / shipped / not_shipped int64 (k,),
    arrival float64 (k,)."""
    ids = split_ids(hex_ids(overflow_ids(name, seq, sign, backfill)))
    qn = json.dumps(name)
    extra = ',"backfill":true' if backfill else ""
    texts = [
        f'{{"type":"overflow","query":{qn},"sign":{s},"seq":{q},"shipped":{k},'
        f'"not_shipped":{n}{extra},"arrival_ts":{a:.6f},"emitted_ts":{emitted:.6f},"id":"{i}"}}'
        for s, q, k, n, a, i in zip(
            sign.tolist(),
            seq.tolist(),
            shipped.tolist(),
            not_shipped.tolist(),
            arrival.tolist(),
            ids,
            strict=True,
        )  # fmt: skip
    ]
    return texts, ids


# -- batch encoding: one frame per engine batch and query -----------------------------------


def _batch(body: dict[str, Any], backfill: bool) -> str:
    if backfill:
        body["backfill"] = True
    return orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def delta_batch_frame(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    match: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> str:
    """One ``{"type": "deltas", ...}`` text for all the rows (arguments as delta_frames)."""
    ids = hex_ids(delta_ids(name, seq, sign, match, backfill))
    body = {
        "type": "deltas", "query": name, "seq": seq, "sign": sign,
        "match": np.ascontiguousarray(match), "ids": ids, "arrival_ts": arrival,
        "emitted_ts": emitted,
    }  # fmt: skip
    return _batch(body, backfill)


def count_batch_frame(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    count: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> str:
    """One ``{"type": "counts", ...}`` text for all the rows."""
    ids = hex_ids(count_ids(name, seq, sign, backfill))
    body = {
        "type": "counts", "query": name, "seq": seq, "sign": sign, "count": count, "ids": ids,
        "arrival_ts": arrival, "emitted_ts": emitted,
    }  # fmt: skip
    return _batch(body, backfill)


def overflow_batch_frame(
    name: str,
    sign: np.ndarray,
    seq: np.ndarray,
    shipped: np.ndarray,
    not_shipped: np.ndarray,
    arrival: np.ndarray,
    emitted: float,
    backfill: bool = False,
) -> str:
    """One ``{"type": "overflows", ...}`` text for all the rows."""
    ids = hex_ids(overflow_ids(name, seq, sign, backfill))
    body = {
        "type": "overflows", "query": name, "seq": seq, "sign": sign, "shipped": shipped,
        "not_shipped": not_shipped, "ids": ids, "arrival_ts": arrival, "emitted_ts": emitted,
    }  # fmt: skip
    return _batch(body, backfill)


# -- control frames -------------------------------------------------------------------------


def gap_frame(dropped: int) -> str:
    return json.dumps({"type": "gap", "dropped": dropped})


def end_frame(reason: str) -> str:
    return json.dumps({"type": "end", "reason": reason})


def rows(frame: dict[str, Any]) -> list[dict[str, Any]]:
    """A frame of either encoding as per-row dicts in the json encoding's shape (tests,
    small clients); control frames come back as they are."""
    kind = frame.get("type")
    if kind not in ("deltas", "counts", "overflows"):
        return [frame]
    payload = {"deltas": ["match"], "counts": ["count"], "overflows": ["shipped", "not_shipped"]}
    keys = ["seq", "sign", "arrival_ts", *payload[kind], "id"]
    columns = [frame[k] for k in keys[:-1]] + [split_ids(frame["ids"])]
    extra = {"backfill": True} if frame.get("backfill") else {}
    out = []
    for values in zip(*columns, strict=True):
        row = dict(zip(keys, values, strict=True)) | extra
        row["query"] = frame["query"]
        row["emitted_ts"] = frame["emitted_ts"]
        if kind != "deltas":
            row["type"] = kind[:-1]
        out.append(row)
    return out
