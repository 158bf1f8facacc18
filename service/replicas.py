"""Replicas: N processes, one logical service (service/README.md, "Replicas").

Every replica reads the whole input topic in the same order, so every update gets the same
seq on every replica and every replica's graph is the same. Registrations and deletions
travel through the same topic as *control records* (header ``dcsm-control``, a JSON body), so
every replica applies them at the same seq whichever replica's HTTP API took them. The
matching work is divided:

* ``queries``: query ``name`` is matched by replica :func:`owner_of` (name, N) only; the
  others keep it in their catalog as *remote* (no engine registration).
* ``updates``: every replica registers every query; replica ``I`` keeps the deltas and counts
  of the updates whose ``seq % N == I`` (:func:`keep_rows`), and the backfill of a query whose
  ``from_seq`` is one of those.

Either way each delta is emitted by exactly one replica: the union of the replicas' outputs
is what one service would emit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.engine import BatchResult

CONTROL_HEADER = "dcsm-control"


def owner_of(name: str, replicas: int) -> int:
    """The replica that matches query ``name`` in shard mode ``queries``: the first 8 bytes
    of the BLAKE2b digest of the UTF-8 name, mod ``replicas``. Stable across processes and
    versions (unlike ``hash()``); it changes only when ``replicas`` does."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % replicas


@dataclass(frozen=True)
class Sharding:
    """This replica's share: ``index`` of ``replicas``, divided by ``mode``."""

    replicas: int = 1
    index: int = 0
    mode: str = "queries"

    @property
    def active(self) -> bool:
        return self.replicas > 1

    def owns_query(self, name: str) -> bool:
        """Whether this replica registers ``name`` in its engine."""
        if not self.active or self.mode == "updates":
            return True
        return owner_of(name, self.replicas) == self.index

    def owns_seq(self, seq: int) -> bool:
        """Whether this replica emits the output of update ``seq`` (backfill at ``seq``)."""
        if not self.active or self.mode == "queries":
            return True
        return seq % self.replicas == self.index

    def keep_rows(self, result: BatchResult) -> BatchResult:
        """``result`` with only this replica's rows (shard mode ``updates``): deltas, counts
        and overflow rows of the updates whose seq mod N is this replica's index. The outcome
        and timing arrays stay whole (every replica applies every update)."""
        if not self.active or self.mode == "queries":
            return result
        n, i = self.replicas, self.index
        return dataclasses.replace(
            result,
            deltas=_rows(result.deltas, result.deltas.seq % n == i),
            counts=_rows(result.counts, result.counts.seq % n == i),
            overflow=_rows(result.overflow, result.overflow.seq % n == i),
        )


def _rows(table: Any, keep: np.ndarray) -> Any:
    """The rows ``keep`` (bool (k,)) of a dataclass of row-aligned arrays."""
    if keep.all():
        return table
    return dataclasses.replace(
        table, **{f.name: getattr(table, f.name)[keep] for f in dataclasses.fields(table)}
    )


def register_record(
    spec: dict[str, Any],
    mode: str,
    encoding: str,
    backfill: bool,
    max_deltas: int | None,
    created_at: float,
) -> bytes:
    """The body of a registration's control record."""
    body = {
        "op": "register", "spec": spec, "mode": mode, "encoding": encoding,
        "backfill": backfill, "max_deltas": max_deltas, "created_at": created_at,
    }  # fmt: skip
    return json.dumps(body, separators=(",", ":")).encode()


def unregister_record(name: str) -> bytes:
    """The body of a deletion's control record."""
    return json.dumps({"op": "unregister", "name": name}, separators=(",", ":")).encode()


def parse_control(value: bytes) -> dict[str, Any]:
    """A control record's body; ValueError if it is not a JSON object with a known op."""
    body = json.loads(value)
    if not isinstance(body, dict) or body.get("op") not in ("register", "unregister"):
        raise ValueError("a control record is a JSON object with op register or unregister")
    return body
