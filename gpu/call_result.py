"""One apply call's result, assembled on the host while the call pumps the output rings.

:class:`CallResult` receives what GpuEngine's pump decodes (completion records: each sent
update's outcome and device times; count rows; match rows in :class:`.rings.MatchRows`) and
turns it into the call's :class:`~dcsm.engine.interface.BatchResult`, in update order.
Updates are numbered by tau, in the order they were sent: ``tau0 + k`` is the k-th update
the call sent (``sent[k]`` its index in the batch).
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from dcsm.engine.interface import BatchResult, Counts, Deltas
from dcsm.model import UpdateBatch

from .rings import MatchRows


@njit(cache=True, nogil=True)
def place_count_rows(i, q, c, sent, seq, op, out_q, out_seq, out_sign, out_count, at,  # type: ignore[no-untyped-def]
                     last_seq, last_q):  # fmt: skip
    """Count rows (update ``sent[i[r]]`` of the batch, query q[r], count c[r]) written as
    Counts fields from row ``at`` on. Returns whether they follow (last_seq, last_q) and
    each other strictly in (seq, query) order, and the last row's seq and query."""
    ordered = True
    for r in range(i.shape[0]):
        u = sent[i[r]]
        s = seq[u]
        if s < last_seq or (s == last_seq and q[r] <= last_q):
            ordered = False
        last_seq, last_q = s, q[r]
        out_q[at + r] = q[r]
        out_seq[at + r] = s
        out_sign[at + r] = op[u]
        out_count[at + r] = c[r]
    return ordered, last_seq, last_q


def _fields(c: Counts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return c.query, c.seq, c.sign, c.count


def _grown(a: np.ndarray, keep: int, size: int) -> np.ndarray:
    """A new array of ``size`` elements of a's type, starting with a's first ``keep``."""
    b = np.empty(size, a.dtype)
    b[:keep] = a[:keep]
    return b


class CallResult:
    """Accumulates one apply call's completions and matches into a BatchResult."""

    def __init__(self, batch: UpdateBatch, tau0: int, width: int, slot_qid: np.ndarray) -> None:
        n = len(batch)
        self.batch = batch
        # Entry k of these is written before it is read (add_sent; drain_done for every sent
        # update, all complete before result()): np.empty, since zeroing them cost ~0.5 ms a
        # call at 28,900 updates (from the heap, calloc zeroes).
        self._sent = np.empty(n, np.int64)  # update index of each tau0 + k, k < nsent
        self.nsent = 0
        self.tau0 = tau0
        self.dev_outcome = np.empty(n, np.int8)
        # Paced calls: when each entered the ring. Made by the first add_entered: zeroing
        # it cost most of this constructor's ~35-45 us on the H200 host (every call's,
        # before its first piece; session 33's apply_profile timelines).
        self._entered: np.ndarray | None = None
        self.taken = np.empty(n, np.float64)  # when the updater read it from the ring
        self.started = np.empty(n, np.float64)
        self.finished = np.empty(n, np.float64)
        # When the host read each completion record (host clock, one stamp a pump): with
        # `entered`, a response bound that needs no device clock (add_seen).
        self.seen = np.empty(n, np.float64)
        self._nentered = 0
        # Count rows as Counts fields, written as the pump reads them (add_count_rows), so
        # that result() has nothing left to gather or sort while the device waits: in
        # (seq, query) order as they come, unless _ordered says otherwise.
        self._counts = Counts.empty()
        self._ncount = 0
        self._ordered = True
        self._last: tuple[int, int] = (-1, -1)  # the last count row's seq and query
        self.rows = MatchRows(width)  # match records, decoded by GpuEngine._pump
        # The query of each slot now: a slot may be freed before the call returns.
        self.slot_qid = slot_qid.copy()

    @property
    def n(self) -> int:
        return len(self.batch)

    @property
    def sent(self) -> np.ndarray:
        return self._sent[: self.nsent]

    def add_sent(self, sent: np.ndarray) -> None:
        """The next admitted updates (they take the next taus, in order)."""
        self._sent[self.nsent : self.nsent + len(sent)] = sent
        self.nsent += len(sent)

    def add_count_rows(self, i: np.ndarray, qid: np.ndarray, count: np.ndarray) -> None:
        """The next count rows: update ``sent[i[r]]``, query ``qid[r]``, ``count[r]``."""
        k = self._ncount
        c = self._counts
        if k + len(i) > len(c):
            # Room for a row an update at first (untouched pages cost nothing), then twice.
            grown = max(k + len(i), 2 * len(c), self.n)
            c = self._counts = Counts(*(_grown(f, k, grown) for f in _fields(c)))
        ordered, last_seq, last_q = place_count_rows(
            i, qid, count, self._sent, self.batch.seq, self.batch.op, c.query, c.seq, c.sign,
            c.count, k, *self._last,
        )  # fmt: skip
        self._ordered = self._ordered and ordered
        self._last = (last_seq, last_q)
        self._ncount = k + len(i)

    def add_entered(self, written_ns: np.ndarray) -> None:
        """When the next sent updates entered the input ring (epoch ns, in tau order)."""
        k = len(written_ns)
        if self._entered is None:
            self._entered = np.zeros(self.n, np.float64)
        self._entered[self._nentered : self._nentered + k] = written_ns / 1e9
        self._nentered += k

    def add_seen(self, tau: int, m: int, now: float) -> None:
        """The completion records of taus [tau, tau + m) were read at ``now`` (epoch s);
        taus outside this call's are not its own (an earlier call's, or none)."""
        lo, hi = max(tau, self.tau0) - self.tau0, min(tau + m, self.tau0 + self.nsent) - self.tau0
        if lo < hi:
            self.seen[lo:hi] = now

    def timeline(self) -> dict[str, np.ndarray]:
        """Per sent update, in tau order (epoch seconds): entered the input ring (paced
        calls only, else 0), taken by the updater, matching started, finished (the device's
        clock, mapped to the host's at launch), and seen: when the host read its completion
        (the host's clock). Views of this collector's arrays: it is done with them once the
        call returns."""
        k = self.nsent
        entered = np.broadcast_to(0.0, k) if self._entered is None else self._entered[:k]
        return {"update": self.sent, "entered": entered, "taken": self.taken[:k],
                "started": self.started[:k], "finished": self.finished[:k],
                "seen": self.seen[:k]}  # fmt: skip

    def result(self, outcome: np.ndarray, ext: np.ndarray) -> BatchResult:
        """The call's BatchResult: ``outcome`` (the host's, per update; not changed) with the
        device's outcome of every sent update, the device's times (the call's end for
        updates not sent), counts and deltas in update order, their matches in the external
        ids of ``ext`` (by internal id). Hands this collector's arrays over: it is done with
        them."""
        k = self.nsent
        every = k == self.n  # every update sent: sent is 0..n-1, no gathers needed
        if every:
            outcome, started, finished = self.dev_outcome, self.started, self.finished
        else:
            now = time.time()
            outcome = outcome.copy()
            outcome[self.sent] = self.dev_outcome[:k]
            started = np.full(self.n, now)
            finished = np.full(self.n, now)
            started[self.sent] = self.started[:k]
            finished[self.sent] = self.finished[:k]
        c, k = self._counts, self._ncount
        counts = Counts(*(f[:k] for f in _fields(c)))
        if not self._ordered:  # rows of one update by slot, slots and queries in other orders
            order = np.lexsort((counts.query, counts.seq))
            counts = Counts(*(f[order] for f in _fields(counts)))
        if self.rows.n:
            op = self.batch.op.astype(np.int8)
            deltas = Deltas(*self.rows.ordered(self.sent, op, self.batch.seq, self.slot_qid, ext))
        else:
            deltas = Deltas.empty(self.rows.width)
        return BatchResult(outcome, deltas, counts, started, finished)


def clock_slack(ring_min: float, seen_min: float) -> tuple[float, float]:
    """Bounds (lo, hi), in seconds, on the correction to add to the device's times in a paced
    call's :meth:`CallResult.timeline`, from its least ring wait (taken - entered) and its
    least time from the device's finish to the host's read (seen - finished). Each update
    was taken after it entered the ring (>= -ring_min) and finished before the host read its
    completion (<= seen_min). The mapping (:mod:`.device_clock`) may be off either way by
    its own slack, so neither bound is assumed to be 0. Adding ``hi`` to a response time
    keeps it an upper bound, the tightest these records allow; ``lo`` to it, a lower
    bound."""
    return min(seen_min, -ring_min), seen_min


def concat_results(parts: list[BatchResult]) -> BatchResult:
    """One BatchResult of consecutive calls' results (the fixed-batch baseline's batches),
    match rows padded with -1 to the widest."""
    width = max((p.deltas.match.shape[1] for p in parts), default=0)

    def pad(m: np.ndarray) -> np.ndarray:
        return np.pad(m, ((0, 0), (0, width - m.shape[1])), constant_values=-1)

    return BatchResult(
        outcome=np.concatenate([p.outcome for p in parts]),
        deltas=Deltas(
            *(
                np.concatenate([getattr(p.deltas, f) for p in parts])
                for f in ("query", "sign", "seq")
            ),
            np.concatenate([pad(p.deltas.match) for p in parts])
            if parts
            else np.zeros((0, 0), np.int64),
        ),
        counts=Counts(
            *(
                np.concatenate([getattr(p.counts, f) for p in parts])
                for f in ("query", "seq", "sign", "count")
            )
        ),
        started=np.concatenate([p.started for p in parts]),
        finished=np.concatenate([p.finished for p in parts]),
    )
