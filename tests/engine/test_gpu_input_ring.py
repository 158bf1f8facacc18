"""The host's end of the GPU input ring (gpu/input_ring.py), without a GPU: records wrap
around the ring in order, a full ring waits for the kernel (here: the wait callback
consumes), the published tail word counts what was written, paced writes are stamped."""

from __future__ import annotations

import time

import numpy as np

from dcsm.gpu import layout as L
from dcsm.gpu.input_ring import _MIRROR_BITS, _MIRROR_MIN, _PUMP_NS, InputRing, as_words


def rig(cap: int) -> tuple[InputRing, np.ndarray, np.ndarray]:
    ring = np.zeros(cap, L.IN_REC)
    hctl = np.zeros(1, L.HOST_CTL)
    dstat = np.zeros(1, L.DEV_STATUS)
    # Short writes only (under the mirror's minimum): no device copy, so no CuPy.
    return InputRing(None, ring, 0, None, hctl, dstat, None), hctl, dstat


def records(first: int, n: int) -> np.ndarray:
    recs = np.zeros(n, L.IN_REC)
    recs["a"] = np.arange(first, first + n)
    return recs


def test_records_wrap_in_order_and_a_full_ring_waits() -> None:
    ring, hctl, dstat = rig(8)
    read: list[int] = []

    def kernel_reads() -> None:  # what the kernel would do while the host waits
        done = int(dstat["in_consumed"][0])
        for t in range(done, ring.tail):
            read.append(int(ring.ring[t % 8]["a"]))
        dstat["in_consumed"] = ring.tail

    assert ring.write(records(0, 5), kernel_reads) is None
    ring.write(records(5, 15), kernel_reads)  # needs two waits: 8 slots, 20 records
    kernel_reads()
    assert read == list(range(20)) and ring.tail == 20
    assert int(hctl["in_tail"][0]) >> _MIRROR_BITS == 20
    assert int(hctl["in_tail"][0]) & ((1 << _MIRROR_BITS) - 1) == 0  # nothing mirrored


def test_records_written_in_place_wrap_and_wait_for_room() -> None:
    # room/commit: the engine's encoder writes a piece straight into the ring's slots.
    ring, hctl, dstat = rig(8)
    ring.write(records(0, 5), lambda: None)
    assert ring.room(4) is None  # 5 of 8 slots not yet read by the kernel
    dstat["in_consumed"] = 5
    room = ring.room(6)
    assert room is not None
    first, rest = room
    assert (len(first), len(rest)) == (3, 3)  # to the ring's end, then from its start
    for part, at in ((first, 5), (rest, 8)):
        part[:] = as_words(records(at, len(part)))
    ring.commit(6)
    assert ring.tail == 11 and int(hctl["in_tail"][0]) >> _MIRROR_BITS == 11
    assert [int(ring.ring[t % 8]["a"]) for t in range(5, 11)] == list(range(5, 11))


def test_paced_records_enter_no_earlier_than_due() -> None:
    ring, _hctl, _dstat = rig(16)
    now = time.time_ns()
    due = np.array([now - 10**6, now, now + 2 * 10**6], np.int64)
    written = ring.write(records(0, 3), lambda: None, due)
    assert written is not None and (written >= due).all()
    assert ring.tail == 3


def test_paced_records_due_back_to_back_still_pump() -> None:
    # At ~1M records/s a record is always due: the write still pumps (calls wait) every
    # _PUMP_NS, so the kernel's completions are read and its update slots come free.
    # Fewer records than the mirror's minimum, so that a write the scheduler delays (a busy
    # CI machine) and that then finds them all due is still a short one; spread over 20 ms,
    # so that such a delay leaves most of the pumps.
    ring, _hctl, _dstat = rig(4096)
    n, span_ns = _MIRROR_MIN - 24, 20_000_000
    due = time.time_ns() + np.linspace(0, span_ns, n).astype(np.int64)
    pumps: list[int] = []
    written = ring.write(records(0, n), lambda: pumps.append(time.time_ns()), due)
    assert written is not None and (written >= due).all() and ring.tail == n
    assert len(pumps) >= span_ns // _PUMP_NS // 4
    assert (np.diff(pumps) >= _PUMP_NS).all()


def test_paced_records_already_due_go_at_once_and_wrap_in_order() -> None:
    ring, hctl, dstat = rig(8)
    ring.write(records(0, 6), lambda: None)
    dstat["in_consumed"] = 6  # the kernel read them
    published: list[int] = []
    ring._in_tail = _Spy(ring._in_tail, published)  # every store of the tail word
    now = time.time_ns()
    due = np.array([now - 3000, now - 2000, now - 1000, now, now + 200 * 10**6], np.int64)
    written = ring.write(records(6, 5), lambda: None, due)
    assert written is not None and (written >= due).all()
    # The four due at the call in one publish, across the ring's end; the fifth, due 0.2 s
    # later (a margin for a busy machine), on its own.
    assert [w >> _MIRROR_BITS for w in published] == [10, 11]
    assert [int(ring.ring[t % 8]["a"]) for t in range(6, 11)] == [6, 7, 8, 9, 10]
    assert int(hctl["in_tail"][0]) >> _MIRROR_BITS == 11


class _Spy:
    """The tail word's view, recording each store into it."""

    def __init__(self, view: np.ndarray, log: list[int]) -> None:
        self.view, self.log = view, log

    def __setitem__(self, i: int, word: int) -> None:
        self.view[i] = word
        self.log.append(int(word))
