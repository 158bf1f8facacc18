"""Host ends of the device -> host rings (pinned memory written by the kernel).

Output ring: int32 records ``[stamp, tau, slot, v0 .. v(n-1)]`` at absolute int positions;
``stamp = pos % (2**31 - 1) + 1`` is written last, so a record is complete once its stamp
matches its position (a stale record of an earlier lap has another stamp). Records are
reserved in order but completed out of order: the reader stops at the first incomplete one.
"""

from __future__ import annotations

from numba import njit

STAMP_MOD = 0x7FFFFFFF


@njit(cache=True)
def read_records(ring, head, nverts, taus, slots, matches, k):
    """Copy complete records from absolute position ``head`` into taus/slots/matches from row
    k on, until an incomplete record or a full buffer. Returns (new head, new k)."""
    cap = ring.shape[0]
    while k < taus.shape[0]:
        if ring[head % cap] != head % STAMP_MOD + 1:
            break
        tau = ring[(head + 1) % cap]
        slot = ring[(head + 2) % cap]
        n = nverts[slot]
        for x in range(n):
            matches[k, x] = ring[(head + 3 + x) % cap]
        taus[k] = tau
        slots[k] = slot
        k += 1
        head += 3 + n
    return head, k
