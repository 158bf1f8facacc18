"""Host ends of the device -> host rings (pinned memory written by the kernel).

Output ring: int32 records ``[stamp, tau, slot, v0 .. v(n-1)]`` at absolute int positions;
``stamp = pos % (2**31 - 1) + 1`` is written last, so a record is complete once its stamp
matches its position (a stale record of an earlier lap has another stamp). Records are
reserved in order but completed out of order: the reader stops at the first incomplete one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from dcsm.engine.intern import grown

STAMP_MOD = 0x7FFFFFFF


@njit(cache=True)
def read_records(ring, head, nverts, ext, slot_qid, tau0, upd, qid, match, k):  # type: ignore[no-untyped-def]
    """Decode complete records from absolute position ``head`` into rows k.. of ``upd``
    (tau - tau0), ``qid`` (the slot's query id now: a slot may serve another query later)
    and ``match`` (external vertex ids, -1 past the query's size), until an incomplete
    record or a full buffer. Returns (new head, new k)."""
    cap = ring.shape[0]
    width = match.shape[1]
    while k < upd.shape[0]:
        if ring[head % cap] != head % STAMP_MOD + 1:
            break
        slot = ring[(head + 2) % cap]
        n = nverts[slot]
        upd[k] = ring[(head + 1) % cap] - tau0
        qid[k] = slot_qid[slot]
        for x in range(n):
            match[k, x] = ext[ring[(head + 3 + x) % cap]]
        for x in range(n, width):
            match[k, x] = -1
        k += 1
        head += 3 + n
    return head, k


class MatchRows:
    """Decoded match rows of one ``apply`` call, in arrival order: numpy arrays that double
    when full, so a run of millions of matches is decoded straight into place."""

    def __init__(self, width: int, capacity: int = 1 << 16) -> None:
        self.n = 0
        self.upd = np.empty(capacity, np.int32)
        self.qid = np.empty(capacity, np.int32)
        self.match = np.empty((capacity, width), np.int64)

    def read(
        self, ring: np.ndarray, head: int, nverts: np.ndarray, ext: np.ndarray,
        slot_qid: np.ndarray, tau0: int, rows: int = 1 << 16,
    ) -> tuple[int, int]:  # fmt: skip
        """Decode up to ``rows`` records; returns (new head, records decoded)."""
        end = self.n + rows
        self.upd, self.qid, self.match = (grown(a, end) for a in (self.upd, self.qid, self.match))
        head, k = read_records(ring, head, nverts, ext, slot_qid, tau0, self.upd[:end],
                               self.qid[:end], self.match[:end], self.n)  # fmt: skip
        got, self.n = k - self.n, k
        return head, got
