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
def count_rows_in_order(i, q, c, sent, every, seq, op, out_q, out_seq, out_sign, out_count):  # type: ignore[no-untyped-def]
    """The Counts fields of count rows (update i[r] of the call, query q[r], count c[r]), in
    one pass: update ``i[r]`` is batch index ``i[r]`` if ``every`` else ``sent[i[r]]``.
    Returns False, leaving the outputs partly written, if the rows are not strictly ordered
    by (update, query)."""
    last_u, last_q = -1, -1
    for r in range(i.shape[0]):
        u = i[r] if every else sent[i[r]]
        if u < last_u or (u == last_u and q[r] <= last_q):
            return False
        last_u, last_q = u, q[r]
        out_q[r] = q[r]
        out_seq[r] = seq[u]
        out_sign[r] = op[u]
        out_count[r] = c[r]
    return True


class CallResult:
    """Accumulates one apply call's completions and matches into a BatchResult."""

    def __init__(self, n: int, tau0: int, width: int, slot_qid: np.ndarray) -> None:
        self.n = n
        # Entry k of these is written before it is read (add_sent; drain_done for every sent
        # update, all complete before result()): np.empty, since zeroing them cost ~0.5 ms a
        # call at 28,900 updates (from the heap, calloc zeroes).
        self._sent = np.empty(n, np.int64)  # update index of each tau0 + k, k < nsent
        self.nsent = 0
        self.tau0 = tau0
        self.dev_outcome = np.empty(n, np.int8)
        self.entered = np.zeros(n, np.float64)  # paced calls: when each entered the ring
        self.taken = np.empty(n, np.float64)  # when the updater read it from the ring
        self.started = np.empty(n, np.float64)
        self.finished = np.empty(n, np.float64)
        # When the host read each completion record (host clock, one stamp a pump): with
        # `entered`, a response bound that needs no device clock (add_seen).
        self.seen = np.empty(n, np.float64)
        self._nentered = 0
        self.count_rows: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.rows = MatchRows(width)  # match records, decoded by GpuEngine._pump
        # The query of each slot now: a slot may be freed before the call returns.
        self.slot_qid = slot_qid.copy()

    @property
    def sent(self) -> np.ndarray:
        return self._sent[: self.nsent]

    def add_sent(self, sent: np.ndarray) -> None:
        """The next admitted updates (they take the next taus, in order)."""
        self._sent[self.nsent : self.nsent + len(sent)] = sent
        self.nsent += len(sent)

    def add_entered(self, written_ns: np.ndarray) -> None:
        """When the next sent updates entered the input ring (epoch ns, in tau order)."""
        k = len(written_ns)
        self.entered[self._nentered : self._nentered + k] = written_ns / 1e9
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
        return {"update": self.sent, "entered": self.entered[:k], "taken": self.taken[:k],
                "started": self.started[:k], "finished": self.finished[:k],
                "seen": self.seen[:k]}  # fmt: skip

    def result(self, batch: UpdateBatch, outcome: np.ndarray) -> BatchResult:
        """The call's BatchResult: ``outcome`` (the host's, per update; not changed) with the
        device's outcome of every sent update, the device's times (the call's end for
        updates not sent), counts and deltas in update order. Hands this collector's arrays
        over: it is done with them."""
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
        if self.count_rows:
            i, q, c = (np.concatenate([r[j] for r in self.count_rows]) for j in range(3))
            k = len(i)
            out = (np.empty(k, np.int32), np.empty(k, np.int64), np.empty(k, np.int8),
                   np.empty(k, np.int64))  # fmt: skip
            # Rows come in tau order (so in update order), each update's by slot: in order
            # already unless slots and query ids disagree in order, and then sorted here.
            if not count_rows_in_order(i, q, c, self.sent, every, batch.seq, batch.op, *out):
                upd = i if every else self.sent[i]
                order = np.lexsort((q, upd))
                out = (q[order].astype(np.int32), batch.seq[upd][order],
                       batch.op[upd][order].astype(np.int8), c[order])  # fmt: skip
            counts = Counts(*out)
        else:
            counts = Counts.empty()
        if self.rows.n:
            op = batch.op.astype(np.int8)
            deltas = Deltas(*self.rows.ordered(self.sent, op, batch.seq, self.slot_qid))
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
