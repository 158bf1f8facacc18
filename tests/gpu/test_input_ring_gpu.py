"""The input ring's device mirror (gpu/input_ring.py) with real CuPy copies and no kernel:
which records the published tail word says the kernel may read from in_mirror, and that
in_mirror then holds exactly those records."""

from __future__ import annotations

import numpy as np

from dcsm.gpu import layout as L
from dcsm.gpu.input_ring import _MIRROR_BITS, _MIRROR_MIN, InputRing, as_words


def rig(cap: int):  # type: ignore[no-untyped-def]
    import cupy as cp

    mem = cp.cuda.alloc_pinned_memory(cap * L.IN_REC.itemsize)
    ring = np.frombuffer(mem, L.IN_REC, cap)
    ring[...] = np.zeros(1, L.IN_REC)[0]
    hctl = np.zeros(1, L.HOST_CTL)
    dstat = np.zeros(1, L.DEV_STATUS)
    mirror = cp.zeros(cap * L.IN_REC.itemsize, np.uint8)
    # The zeroing runs on the null stream, which a non-blocking stream's copies do not wait
    # for: unsynchronised, it could land after the ring's first copy and wipe it (two tests
    # failed so while eight test processes shared the GPU; GpuEngine synchronises the null
    # stream before its kernel, and so before any copy, runs).
    cp.cuda.Stream.null.synchronize()
    side = cp.cuda.Stream(non_blocking=True)
    return cp, mem, InputRing(cp, ring, mem.ptr, mirror, hctl, dstat, side), hctl, mirror, side


def records(first: int, n: int) -> np.ndarray:
    recs = np.zeros(n, L.IN_REC)
    recs["a"] = np.arange(first, first + n)
    return recs


def published(hctl: np.ndarray) -> tuple[int, int]:
    """(tail, records before it that are in in_mirror) of the published tail word."""
    word = int(hctl["in_tail"][0])
    return word >> _MIRROR_BITS, word & ((1 << _MIRROR_BITS) - 1)


def settle(ring: InputRing, side) -> None:  # type: ignore[no-untyped-def]
    side.synchronize()
    ring.flush()


def test_a_short_write_behind_unread_mirrored_ones_is_mirrored_too() -> None:
    cp, _mem, ring, hctl, mirror, side = rig(8192)
    ring.write(records(0, 2 * _MIRROR_MIN), lambda: None)
    settle(ring, side)
    assert published(hctl) == (2 * _MIRROR_MIN, 2 * _MIRROR_MIN)
    # An apply's short last piece, the kernel not having read the two before: copied too,
    # so the word still says every unread record is in in_mirror.
    ring.write(records(2 * _MIRROR_MIN, 100), lambda: None)
    settle(ring, side)
    n = 2 * _MIRROR_MIN + 100
    assert published(hctl) == (n, n)
    got = cp.asnumpy(mirror).view(L.IN_REC)[:n]
    assert (got["a"] == np.arange(n)).all()


def test_a_short_write_goes_alone_once_the_kernel_read_the_rest() -> None:
    _cp, _mem, ring, hctl, _mirror, side = rig(8192)
    ring.write(records(0, 2 * _MIRROR_MIN), lambda: None)
    settle(ring, side)
    ring._dstat["in_consumed"] = 2 * _MIRROR_MIN  # the kernel read them
    ring.write(records(2 * _MIRROR_MIN, 100), lambda: None)
    # Fewer than _MIRROR_MIN unread: published at once, from host memory.
    assert published(hctl) == (2 * _MIRROR_MIN + 100, 0)


def test_a_paced_short_write_is_never_copied() -> None:
    _cp, _mem, ring, hctl, _mirror, side = rig(8192)
    ring.write(records(0, 2 * _MIRROR_MIN), lambda: None)
    settle(ring, side)
    due = np.zeros(10, np.int64)  # all due: written at once
    ring.write(records(2 * _MIRROR_MIN, 10), lambda: None, due)
    assert published(hctl) == (2 * _MIRROR_MIN + 10, 0)


def test_records_written_in_place_across_the_end_are_mirrored_in_order() -> None:
    cp, _mem, ring, hctl, mirror, side = rig(4096)
    ring.write(records(0, 3000), lambda: None)
    settle(ring, side)
    ring._dstat["in_consumed"] = 3000
    room = ring.room(2000)
    assert room is not None
    first, rest = room
    first[:] = as_words(records(3000, len(first)))
    rest[:] = as_words(records(3000 + len(first), len(rest)))
    ring.commit(2000)
    ring.write(records(5000, 50), lambda: None)  # short, behind 2,000 unread mirrored
    settle(ring, side)
    tail, mirrored = published(hctl)
    assert tail == 5050 and mirrored >= 2050  # every unread record (a whole ring: 4,096)
    got = cp.asnumpy(mirror).view(L.IN_REC)["a"]
    want = np.arange(3000, 5050)
    assert (got[np.arange(3000, 5050) % 4096] == want).all()
