"""The engine interface shared by the CPU and GPU backends.

An engine owns one data graph and a set of registered queries, and turns batches of edge
updates into match deltas. Both backends implement exactly the same semantics (see README,
"Matching semantics"), so the CPU engine is the oracle for the GPU engine:

* Updates are applied in ``seq`` order. An insertion reports the matches that contain the new
  edge in the graph right after it (sign +1); a deletion, those that contain the edge in the
  graph right before it (sign -1). Each match is reported exactly once, however many of its
  edges share a batch.
* An edge is identified by its unordered endpoint pair; its label is fixed when inserted.
  Inserting an existing pair or deleting a missing one changes nothing (outcome ``noop``).
  A self loop, or a vertex label that differs from the one the vertex was first seen with,
  rejects that update alone (outcome ``self_loop`` / ``label_conflict``).
* A vertex first seen without a label gets label 0.
* ``register(qid, pattern, from_seq=s)`` makes the query see every update with ``seq >= s``;
  ``unregister(qid, from_seq=s)`` stops it from ``s`` on. Both must not lie in the past
  (before the next seq the engine expects).
* A query registered with ``count_only=True`` produces :class:`Counts` rows (one per update
  and sign with a non-zero count) instead of :class:`Deltas` rows.
* A query registered with ``max_deltas=c`` reports at most ``c`` :class:`Deltas` rows per
  update; for an update with more matches, ``BatchResult.overflow`` has one row with how
  many it left out, so rows + overflow is the exact number of matches.

This module holds the contract only; :mod:`dcsm.engine.factory` picks and builds an
implementation. Usage::

    engine = make_engine("auto")      # from dcsm.engine
    engine.load_graph(graph)
    engine.register(0, pattern, from_seq=0)
    result = engine.apply(batch)      # BatchResult of numpy arrays
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EngineError
from ..model import Graph, Pattern, UpdateBatch
from .plan import PlanTable, QueryPlan, orbit_plans, plan_query, stack_plans

if TYPE_CHECKING:
    from .snapshot import MatchSnapshot

NO_END = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Deltas:
    """Match deltas of embedding-mode queries, in (seq, query) order.

    Attributes:
        query: int32 (k,) query id.  sign: int8 (k,) +1 / -1.  seq: int64 (k,) update seq.
        match: int64 (k, w) data vertex ids in query-vertex order; w is the largest vertex
            count among the registered queries, shorter rows padded with -1.
    """

    query: np.ndarray
    sign: np.ndarray
    seq: np.ndarray
    match: np.ndarray

    def __len__(self) -> int:
        return int(self.query.shape[0])

    @staticmethod
    def empty(width: int = 0) -> Deltas:
        return Deltas(
            np.zeros(0, np.int32),
            np.zeros(0, np.int8),
            np.zeros(0, np.int64),
            np.zeros((0, width), np.int64),
        )


@dataclass(frozen=True)
class Counts:
    """Per-update match counts of count-mode queries (rows with count > 0 only).

    Attributes: query int32 (k,), seq int64 (k,), sign int8 (k,), count int64 (k,).
    """

    query: np.ndarray
    seq: np.ndarray
    sign: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return int(self.query.shape[0])

    @staticmethod
    def empty() -> Counts:
        return Counts(
            np.zeros(0, np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int8),
            np.zeros(0, np.int64),
        )


@dataclass(frozen=True)
class BatchResult:
    """What ``Engine.apply`` returns for a batch of n updates.

    Attributes:
        outcome: int8 (n,); dcsm.model.OUTCOME_* per update.
        deltas: embedding-mode deltas.  counts: count-mode counts.
        started, finished: float64 (n,); wall-clock seconds (time.time()) at which matching
            of each update started and finished. Backends stamp at the finest grain they can
            (the CPU engine per chunk of updates, the GPU engine per update).
    """

    outcome: np.ndarray
    deltas: Deltas
    counts: Counts
    started: np.ndarray
    finished: np.ndarray
    overflow: Counts = field(default_factory=Counts.empty)
    """Per update and capped query (``max_deltas``) whose matches exceeded the cap: count =
    the matches not in ``deltas`` (so the shipped rows plus it are exact)."""


@dataclass
class _Registration:
    qid: int
    plan: QueryPlan
    count_only: bool
    from_seq: int
    until_seq: int = NO_END
    max_deltas: int = -1  # most delta rows per update; -1: no cap


@dataclass
class QueryRegistry:
    """Registered queries and the seq interval each is live for; both backends use it to
    build the stacked plan table their kernels read."""

    next_seq: int = 0
    _regs: dict[int, _Registration] = field(default_factory=dict)
    _version: int = 0

    def register(
        self,
        qid: int,
        pattern: Pattern,
        from_seq: int,
        count_only: bool,
        max_deltas: int | None = None,
        images: bool = False,
    ) -> QueryPlan:
        """The query's plans: one per orbit of oriented edges in count mode, and in
        embeddings mode too for an engine that writes each found match's ``images``
        (:func:`~dcsm.engine.plan.orbit_plans`); every plan otherwise."""
        if max_deltas is not None and max_deltas < 0:
            raise EngineError(f"max_deltas must be >= 0 or None, got {max_deltas}")
        if qid in self._regs:
            raise EngineError(f"query id {qid} is already registered")
        if from_seq < self.next_seq:
            raise EngineError(
                f"cannot register query {qid} from seq {from_seq}: updates up to "
                f"{self.next_seq - 1} were already applied"
            )
        plan = plan_query(pattern)
        if count_only or images:
            plan = orbit_plans(plan)
        cap = -1 if max_deltas is None else int(max_deltas)
        self._regs[qid] = _Registration(qid, plan, count_only, from_seq, max_deltas=cap)
        self._version += 1
        return plan

    def caps(self) -> np.ndarray:
        """int64 (Q,) max_deltas per slot (-1: no cap), in :meth:`table`'s slot order."""
        return np.array([r.max_deltas for r in self._regs.values()], np.int64)

    def unregister(self, qid: int, from_seq: int) -> None:
        reg = self._regs.get(qid)
        if reg is None or reg.until_seq != NO_END:
            raise EngineError(f"query id {qid} is not registered")
        if from_seq < self.next_seq:
            raise EngineError(
                f"cannot unregister query {qid} from seq {from_seq}: updates up to "
                f"{self.next_seq - 1} were already applied"
            )
        reg.until_seq = from_seq
        self._version += 1

    def advance(self, last_seq: int) -> None:
        """Record that every update up to ``last_seq`` is applied; forget expired queries."""
        self.next_seq = last_seq + 1
        expired = [q for q, r in self._regs.items() if r.until_seq <= self.next_seq]
        for q in expired:
            del self._regs[q]
        if expired:
            self._version += 1

    @property
    def version(self) -> int:
        """Changes whenever the table would change (cache key for uploaded plans)."""
        return self._version

    def max_vertices(self) -> int:
        """Largest vertex count among registered queries (the width of Deltas.match)."""
        return max((r.plan.num_vertices for r in self._regs.values()), default=0)

    def table(self) -> tuple[PlanTable, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(plans, qid int32 (Q,), from_seq int64 (Q,), until_seq int64 (Q,),
        count_only bool (Q,)), slot order = registration order."""
        regs = list(self._regs.values())
        return (
            stack_plans([r.plan for r in regs]),
            np.array([r.qid for r in regs], np.int32),
            np.array([r.from_seq for r in regs], np.int64),
            np.array([r.until_seq for r in regs], np.int64),
            np.array([r.count_only for r in regs], np.bool_),
        )


class Engine(abc.ABC):
    """One data graph, a set of queries, and batches of updates in; deltas out."""

    backend: str = "abstract"
    #: Whether the engine's kernels write every match a found match stands for (the plan
    #: table's ``images``), so that embeddings-mode queries run one plan per orbit too.
    writes_images: bool = False

    def __init__(self) -> None:
        self.queries = QueryRegistry()

    @abc.abstractmethod
    def load_graph(self, graph: Graph) -> None:
        """Bulk-load an initial graph; only before the first ``apply``."""

    def register(
        self,
        qid: int,
        pattern: Pattern,
        *,
        from_seq: int,
        count_only: bool = False,
        max_deltas: int | None = None,
    ) -> None:
        """Make query ``qid`` see every update with seq >= ``from_seq``; ``max_deltas``: at
        most that many delta rows per update (the rest counted in ``BatchResult.overflow``)."""
        self.queries.register(qid, pattern, from_seq, count_only, max_deltas,
                              images=self.writes_images)  # fmt: skip

    def unregister(self, qid: int, *, from_seq: int) -> None:
        """Stop query ``qid`` from seq ``from_seq`` on."""
        self.queries.unregister(qid, from_seq)

    @abc.abstractmethod
    def apply(self, batch: UpdateBatch) -> BatchResult:
        """Apply ``batch`` (strictly increasing seqs, all >= the next expected seq)."""

    @abc.abstractmethod
    def count_static(self, pattern: Pattern) -> int:
        """Matches of ``pattern`` in the current graph (embeddings, or subgraphs if
        ``pattern.distinct``)."""

    @abc.abstractmethod
    def match_static(self, pattern: Pattern) -> np.ndarray:
        """Every match of ``pattern`` in the current graph: int64 (k, n) external ids."""

    @abc.abstractmethod
    def export_graph(self) -> Graph:
        """The current graph (for snapshots)."""

    def static_snapshot(self) -> MatchSnapshot | None:
        """A copy of the current graph that static matching can run on in other threads
        while this engine applies updates (a backfill beside the stream); None where
        static matching runs on the engine itself (the GPU engine without room for it)."""
        return None

    def memory_bytes(self) -> int:
        """Bytes the engine holds for its graph and buffers (host arrays by default)."""
        return sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray))

    def close(self) -> None:  # noqa: B027 - optional hook, a no-op for engines without resources
        """Release resources; the engine is unusable afterwards."""

    def _check_batch(self, batch: UpdateBatch) -> None:
        if len(batch) == 0:
            return
        if batch.seq[0] < self.queries.next_seq:
            raise EngineError(
                f"batch starts at seq {int(batch.seq[0])}, but seqs up to "
                f"{self.queries.next_seq - 1} were already applied"
            )
        if len(batch) > 1 and not (batch.seq[1:] > batch.seq[:-1]).all():
            raise EngineError("seqs in a batch must be strictly increasing")


def cap_deltas(result: BatchResult, caps: dict[int, int]) -> BatchResult:
    """``result`` with at most ``caps[qid]`` delta rows per (update, query); the rows cut
    become :attr:`BatchResult.overflow` counts (added to any already there). For engines
    whose kernels have no cap: the rows were materialised, this only bounds what goes on.
    Vectorised; rows keep their order."""
    d = result.deltas
    if not caps or not len(d):
        return result
    qids = np.fromiter(caps, np.int64, len(caps))
    limits = np.fromiter(caps.values(), np.int64, len(caps))
    sorter = np.argsort(qids)
    at = np.searchsorted(qids, d.query, sorter=sorter).clip(max=len(qids) - 1)
    known = qids[sorter[at]] == d.query
    cap = np.where(known, limits[sorter[at]], -1)
    if not (cap >= 0).any():
        return result
    order = np.lexsort((d.seq, d.query))  # stable: rows of one (query, update) keep order
    qs, ss = d.query[order], d.seq[order]
    new = np.ones(len(order), np.bool_)
    new[1:] = (qs[1:] != qs[:-1]) | (ss[1:] != ss[:-1])
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, len(order)))
    rank = np.arange(len(order)) - np.repeat(starts, sizes)
    cap_sorted = cap[order]
    keep = np.empty(len(order), np.bool_)
    keep[order] = (cap_sorted < 0) | (rank < cap_sorted)
    if keep.all():
        return result
    gcap = cap_sorted[starts]
    over = (gcap >= 0) & (sizes > gcap)
    g = starts[over]
    cut = Counts(
        query=qs[g].astype(np.int32), seq=ss[g], sign=d.sign[order][g],
        count=(sizes[over] - gcap[over]).astype(np.int64),
    )  # fmt: skip
    o = result.overflow
    fields = ("query", "seq", "sign", "count")
    merged = Counts(*(np.concatenate([getattr(o, f), getattr(cut, f)]) for f in fields))
    if len(o):  # one row per (query, update): sum the engine's and ours
        key_order = np.lexsort((merged.query, merged.seq))
        mq, ms = merged.query[key_order], merged.seq[key_order]
        first = np.ones(len(mq), np.bool_)
        first[1:] = (mq[1:] != mq[:-1]) | (ms[1:] != ms[:-1])
        idx = np.flatnonzero(first)
        merged = Counts(
            mq[idx], ms[idx], merged.sign[key_order][idx],
            np.add.reduceat(merged.count[key_order], idx),
        )  # fmt: skip
    else:
        o2 = np.lexsort((merged.query, merged.seq))
        merged = Counts(*(getattr(merged, f)[o2] for f in fields))
    deltas = Deltas(d.query[keep], d.sign[keep], d.seq[keep], d.match[keep])
    return dataclasses.replace(result, deltas=deltas, overflow=merged)
