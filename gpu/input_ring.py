"""The host's end of the persistent kernel's input ring.

Records (:data:`.layout.IN_REC`: updates and control records) are written into a pinned
ring of ``cap`` records that the kernel reads; ``HostCtl.in_tail`` tells it how far it may
read and ``DevStatus.in_consumed`` tells the host what the kernel has read, so a write waits
for room (pumping the output rings meanwhile, through the caller's ``wait``). A long write
is also copied into ``in_mirror``, a device copy of the ring that the kernel reads ~7x
faster than host memory, and so is a short unpaced one that follows mirrored records the
kernel has not read yet: the tail that names such records is published only once its copy
has finished, tails always in order, and the host goes on meanwhile.

Buffers: ``ring`` pinned host IN_REC[cap] (host writes, kernel reads); ``mirror`` device
bytes (copies on the side stream write, kernel reads); ``hctl`` pinned HostCtl (host
writes in_tail); ``dstat`` pinned DevStatus (kernel writes in_consumed, host reads).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from . import layout as L

_SPIN_NS = 50_000  # a paced write waits by spinning for a record due within this time
# A paced write pumps (calls ``wait``) at least this often even when a record is always due:
# at ~1M records/s it never finds an idle moment, and completions read late hold the
# kernel's update slots (an update's slot is taken again only once the host has read its
# completion), so the updater stalls and the input ring backs up.
_PUMP_NS = 100_000
# A write of at least this many records is also copied into the device's in_mirror (a copy
# and its wait cost the host ~20-30 us).
_MIRROR_MIN = 1024
_MIRROR_BITS = 24  # HostCtl.in_tail = tail << 24 | records before it in in_mirror (layout.cuh)


def as_words(recs: np.ndarray) -> np.ndarray:
    """Records as rows of int64 words (a view): numpy copies rows of a plain dtype ~15x
    faster than records of a structured one (4 against 64 ns a record on the 2-core host,
    ``bench/debug/host_path_cost.py``)."""
    return np.ascontiguousarray(recs).view(np.int64).reshape(len(recs), L.IN_REC.itemsize // 8)


class InputRing:
    """Writes records into the input ring and publishes its tail."""

    def __init__(
        self, cp: Any, ring: np.ndarray, ring_ptr: int, mirror: Any, hctl: np.ndarray,
        dstat: np.ndarray, stream: Any,
    ) -> None:  # fmt: skip
        self._cp = cp
        self.ring = ring
        self._ring_ptr = ring_ptr
        self._mirror = mirror
        self._in_tail = hctl["in_tail"]  # a view: a plain store publishes (~0.1 us)
        self._dstat = dstat
        self._stream = stream  # the copies into in_mirror
        self._words = as_words(ring)
        self.tail = 0  # records written so far
        self._mirror_from = 0  # records [_mirror_from, tail) are also in in_mirror
        # Tail words not yet published, each with the end of its copy into in_mirror.
        self._tails: deque[tuple[Any, int]] = deque()

    @property
    def cap(self) -> int:
        return int(self.ring.shape[0])

    def write(
        self, recs: np.ndarray, wait: Callable[[], None], due_ns: np.ndarray | None = None
    ) -> np.ndarray | None:
        """Write ``recs`` as room frees up, calling ``wait`` whenever there is none (the
        engine pumps its output rings there), and, when ``due_ns`` is given, no record
        before its due time; then returns when each record entered the ring (epoch ns)."""
        cap = self.cap
        i = 0
        words = as_words(recs)
        written = None if due_ns is None else np.zeros(len(recs), np.int64)
        pumped = time.time_ns()
        while i < len(recs):
            free = cap - (self.tail - int(self._dstat["in_consumed"][0]))
            k = min(free, len(recs) - i)
            if due_ns is not None:
                now = time.time_ns()
                if now - pumped >= _PUMP_NS:
                    wait()
                    pumped = now = time.time_ns()
                due = int(due_ns[i])
                if free > 0 and due - now < _SPIN_NS:
                    # The next record is due soon: wait for it here rather than in a pump,
                    # which could make it late.
                    while now < due:
                        now = time.time_ns()
                # Records due by now: at a steady rate usually this one alone, told by one
                # look at the next (the time from here to the tail's store is the record's
                # wait in the ring: bench/gpu_bench.py's "ring").
                if due > now:
                    k = 0
                elif k > 1 and due_ns[i + 1] <= now:
                    k = min(k, int(np.searchsorted(due_ns, now, "right")) - i)
                else:
                    k = min(k, 1)
            if k > 0:
                at = self.tail % cap
                first = min(k, cap - at)  # up to the ring's end, then from its start
                self._words[at : at + first] = words[i : i + first]
                if k > first:
                    self._words[: k - first] = words[i + first : i + k]
                self._publish(at, first, k, paced=due_ns is not None)
                if written is not None:
                    written[i : i + k] = now
                i += k
            else:
                wait()
                pumped = time.time_ns()
        return written

    def room(self, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """The next k records' slots as int64 word rows (to the ring's end, then from its
        start), for a writer that fills them in place and then calls :meth:`commit`; None
        while the kernel has not yet read enough of the ring (then :meth:`write` waits)."""
        cap = self.cap
        if cap - (self.tail - int(self._dstat["in_consumed"][0])) < k:
            return None
        at = self.tail % cap
        first = min(k, cap - at)
        return self._words[at : at + first], self._words[: k - first]

    def commit(self, k: int) -> None:
        """Hand the k records just written into :meth:`room`'s slots to the kernel."""
        at = self.tail % self.cap
        self._publish(at, min(k, self.cap - at), k)

    def _publish(self, at: int, first: int, k: int, paced: bool = False) -> None:
        """Hand k records just written at ring slot ``at`` (``first`` of them before the
        ring's end) to the kernel: at once, or for a long write once its copy into
        in_mirror has finished (:meth:`flush`).

        An unpaced short write is copied too while it extends mirrored records the kernel
        has not all read, so that they are _MIRROR_MIN or more together: its tail word would
        otherwise say that nothing before it is mirrored, and the kernel would read that
        backlog from host memory (~13 ns a record: an apply's last batch of 16,384 was
        read in 0.21 ms behind its short last piece, against 0.03 ms for 8,192 mirrored,
        bench/results/gpu/session28/call3/prof-Q_1-deletion10-p4096.txt)."""
        mirror = k >= _MIRROR_MIN or (
            not paced
            and self._mirror_from < self.tail
            and self.tail + k - int(self._dstat["in_consumed"][0]) >= _MIRROR_MIN  # unread
        )
        if not mirror and not self._tails:  # nothing before it waits for a copy
            self.tail += k
            self._mirror_from = self.tail
            self._in_tail[0] = (self.tail & ((1 << 40) - 1)) << _MIRROR_BITS
            return
        done = None
        if mirror:
            size = L.IN_REC.itemsize
            rt = self._cp.cuda.runtime
            for slot, count in ((at, first), (0, k - first)):
                if count:
                    rt.memcpyAsync(self._mirror.data.ptr + slot * size,
                                   self._ring_ptr + slot * size, count * size,
                                   rt.memcpyHostToDevice, self._stream.ptr)  # fmt: skip
            done = self._cp.cuda.Event(block=False, disable_timing=True)
            done.record(self._stream)
        else:
            self._mirror_from = self.tail + k
        self.tail += k
        mirrored = min(self.tail - self._mirror_from, self.cap, (1 << _MIRROR_BITS) - 1)
        word = ((self.tail & ((1 << 40) - 1)) << _MIRROR_BITS) | mirrored
        self._tails.append((done, word))
        self.flush()

    def flush(self) -> None:
        """Publish the newest tail whose copies into in_mirror, and every earlier one's,
        have finished."""
        word = None
        while self._tails and (self._tails[0][0] is None or self._tails[0][0].done):
            word = self._tails.popleft()[1]
        if word is not None:
            self._in_tail[0] = word
