"""Replicas: N processes, one logical service (service/README.md, "Replicas").

Every replica reads the whole input topic in the same order, so every update gets the same
seq on every replica and every replica's graph is the same. Registrations and deletions
travel through the same topic as *control records* (header ``dcsm-control``, a JSON body), so
every replica applies them at the same seq whichever replica's HTTP API took them. The
matching work is divided:

* ``queries``: a query is matched by one replica only, its *owner*; the others keep it in
  their catalog as *remote* (no engine registration). The owner is decided when the query's
  control record is applied, alike on every replica (:func:`choose_owner`: the pinned
  replica, else the one owning the fewest queries not being deleted), and kept with the
  query (catalog, checkpoints). Queries of a checkpoint written before owners were stored
  keep the old rule, :func:`owner_of` (a hash of the name).
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.engine import BatchResult

from .errors import ServiceError
from .frames import ENCODINGS

CONTROL_HEADER = "dcsm-control"


def owner_of(name: str, replicas: int) -> int:
    """The previous placement rule, kept for the queries of checkpoints written before owners
    were stored: the first 8 bytes of the BLAKE2b digest of the UTF-8 name, mod
    ``replicas``. Stable across processes and versions (unlike ``hash()``)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % replicas


def choose_owner(owners: Iterable[int | None], replicas: int, pin: int | None = None) -> int:
    """The replica that matches a new query (shard mode ``queries``): ``pin`` if it names one
    of the ``replicas``; otherwise the replica that owns the fewest of ``owners`` (the owners
    of the queries not being deleted), the lowest index on ties. A pure function of the
    catalog, which every replica holds alike when it applies a control record, so every
    replica chooses the same one. A pin out of range (a record written when N was larger)
    is placed by load."""
    if pin is not None and 0 <= pin < replicas:
        return pin
    load = [0] * replicas
    for owner in owners:
        if owner is not None and 0 <= owner < replicas:
            load[owner] += 1
    return min(range(replicas), key=load.__getitem__)


def place_in_order(pins: Sequence[int | None], replicas: int) -> list[int]:
    """Owners of queries placed one after the other (in qid order), each by
    :func:`choose_owner` over those before it: how a restart with another N re-places the
    queries of its checkpoint."""
    owners: list[int] = []
    for pin in pins:
        owners.append(choose_owner(owners, replicas, pin))
    return owners


@dataclass(frozen=True)
class Sharding:
    """This replica's share: ``index`` of ``replicas``, divided by ``mode``."""

    replicas: int = 1
    index: int = 0
    mode: str = "queries"

    @property
    def active(self) -> bool:
        return self.replicas > 1

    @property
    def splits_queries(self) -> bool:
        """Whether each query is matched by one replica (N > 1, shard mode ``queries``)."""
        return self.active and self.mode == "queries"

    @property
    def placement(self) -> dict[str, Any]:
        """What the owners stored in a checkpoint were decided for (its ``placement``)."""
        return {"replicas": self.replicas, "shard": self.mode}

    def owns_query(self, owner: int | None) -> bool:
        """Whether this replica registers a query whose stored owner is ``owner`` in its
        engine (every replica does unless queries are split)."""
        return not self.splits_queries or owner == self.index

    def place(self, owners: Iterable[int | None], pin: int | None) -> int | None:
        """The owner of a new query, given the ``owners`` of the queries not being deleted:
        :func:`choose_owner` when queries are split; 0 for a single service; None in shard
        mode ``updates`` (every replica matches it)."""
        if not self.active:
            return 0
        if self.mode == "updates":
            return None
        return choose_owner(owners, self.replicas, pin)

    def check_pin(self, pin: int | None) -> None:
        """400 unless ``pin`` (a registration's ``replica``) names one of this service's
        replicas in shard mode ``queries`` (or is 0 for a single service)."""
        if pin is None:
            return
        if self.active and self.mode == "updates":
            reason = "only with --shard queries: with --shard updates every replica matches it"
        elif not 0 <= pin < self.replicas:
            reason = f"no replica {pin}: this service has replicas 0..{self.replicas - 1}"
        else:
            return
        raise ServiceError(f"invalid replica: {reason}", [{"field": "replica", "reason": reason}])

    def restored_owners(
        self, rows: Sequence[dict[str, Any]], placed: dict[str, Any] | None
    ) -> list[int | None]:
        """Owners of a checkpoint's queries (``rows`` in qid order; ``placed``: the
        checkpoint's ``placement``). The stored owners where the checkpoint was written for
        this N and shard mode; :func:`owner_of` where it predates stored owners
        (``placed`` None); otherwise (N or the mode changed) all re-placed in qid order,
        pins kept where they are in range."""
        if not self.splits_queries:
            return [self.place((), None) for _ in rows]
        if placed is None:
            return [owner_of(str(r["name"]), self.replicas) for r in rows]
        stored = [r.get("replica") for r in rows]
        if placed == self.placement and all(
            isinstance(o, int) and 0 <= o < self.replicas for o in stored
        ):
            return stored
        return list(place_in_order([pin_of(r) for r in rows], self.replicas))

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
    pin: int | None = None,
) -> bytes:
    """The body of a registration's control record (``"replica"``: a pin, only if one)."""
    body: dict[str, Any] = {
        "op": "register", "spec": spec, "mode": mode, "encoding": encoding,
        "backfill": backfill, "max_deltas": max_deltas, "created_at": created_at,
    }  # fmt: skip
    if pin is not None:
        body["replica"] = pin
    return json.dumps(body, separators=(",", ":")).encode()


def pin_of(body: dict[str, Any], key: str = "pin") -> int | None:
    """The pinned replica a control record (``key="replica"``) or a stored row names; None
    for none, or for anything but a non-negative integer."""
    pin = body.get(key)
    return pin if isinstance(pin, int) and not isinstance(pin, bool) and pin >= 0 else None


def unregister_record(name: str) -> bytes:
    """The body of a deletion's control record."""
    return json.dumps({"op": "unregister", "name": name}, separators=(",", ":")).encode()


def parse_control(value: bytes) -> dict[str, Any]:
    """A control record's body; ValueError unless it is a JSON object with a known op and
    the fields :func:`register_record` or :func:`unregister_record` write, of their types
    (the query spec itself is the caller's to validate)."""
    body = json.loads(value)
    if not isinstance(body, dict) or body.get("op") not in ("register", "unregister"):
        raise ValueError("a control record is a JSON object with op register or unregister")
    if body["op"] == "unregister":
        if not isinstance(body.get("name"), str):
            raise ValueError("a deletion's control record names the query (a string)")
        return body
    checks = {
        "spec": isinstance(body.get("spec"), dict),
        "mode": body.get("mode") in ("embeddings", "count"),
        "encoding": body.get("encoding") in ENCODINGS,
        "backfill": isinstance(body.get("backfill"), bool),
        "created_at": isinstance(body.get("created_at"), int | float)
        and not isinstance(body.get("created_at"), bool),
        "max_deltas": body.get("max_deltas") is None
        or (type(body.get("max_deltas")) is int and body["max_deltas"] > 0),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ValueError(f"a registration's control record with invalid {', '.join(bad)}")
    return body
