"""The device's clock on the host's: the offset that maps the persistent kernel's times
(``%globaltimer``: when an update was taken, started, finished) to ``time.time_ns``.

The two clocks drift apart: on an H200, ~7 ppm (``bench/debug/device_clock.py``), so an
offset measured once at launch is 7 us off after a second and 25 ms after an hour of a
service's run, and every response time it maps is off by as much. So the host asks again
while the kernel runs: it changes ``HostCtl.clock_ping``; updater warp 0, polling host
memory anyway (``relay`` in updater_batch.cuh), writes its clock and then the ping into
``DevStatus.clock_pong_ns`` and ``clock_pong``. The device read its clock after the host
wrote the ping and before the host saw the answer, so the offset lies between the two host
times less the device's (less one tick of its clock, which counts in steps of ~1.5 us).
The host waits for the answer right after asking, so that the bounds are a few us wide,
and sets the offset to their middle.

Buffers: ``hctl`` pinned HostCtl (host writes clock_ping), ``dstat`` pinned DevStatus
(kernel writes clock_pong_ns, then clock_pong; host reads).
"""

from __future__ import annotations

import time
from collections import deque

import numpy as np

PERIOD_NS = 20_000_000  # ask again this long after an answer (7 ppm: 0.14 us of drift)
RETRY_NS = 5_000_000  # ask again this long after a ping left unanswered
SPIN_NS = 20_000  # wait this long for an answer (warp 0 polls host memory every ~2-4 us)
TICK_NS = 2_000  # %globaltimer's step, at most (1.4-1.8 us measured on an H200)


class DeviceClock:
    """The offset (host ns minus device ns) and how well it is known."""

    def __init__(self, hctl: np.ndarray, dstat: np.ndarray) -> None:
        self._ping = hctl["clock_ping"]  # views: plain loads and stores in the pump
        self._pong = dstat["clock_pong"]
        self._pong_ns = dstat["clock_pong_ns"]
        self.offset_ns = 0
        self.slack_ns = 0  # half the width of the offset's bounds
        self._next_ns = 0  # host time (monotonic) to ask again
        self._seq = int(self._ping[0])
        # (host ns, offset ns, slack ns) of the last answers, for drift reports.
        self.samples: deque[tuple[int, int, int]] = deque(maxlen=4096)

    def at_launch(self, offset_ns: int) -> None:
        """The launch's offset (its device time read before the host's: late by the start
        flag's trip), until the first answer; and ask at the next :meth:`tend`."""
        self.offset_ns = offset_ns
        self._next_ns = 0

    def tend(self) -> None:
        """When it is time, ping and wait up to SPIN_NS for the answer (the bounds are as
        narrow as the wait is short); an answer that comes later is never taken. Cheap
        when it is not time: called from every pump."""
        if time.monotonic_ns() < self._next_ns:
            return
        self._seq += 1
        asked = time.time_ns()
        self._ping[0] = self._seq
        while int(self._pong[0]) != self._seq:
            if time.time_ns() - asked > SPIN_NS:  # warp 0 is busy: later
                self._next_ns = time.monotonic_ns() + RETRY_NS
                return
        seen = time.time_ns()
        dev = int(self._pong_ns[0])
        lo, hi = asked - TICK_NS - dev, seen - dev
        self.offset_ns = (lo + hi) // 2
        self.slack_ns = (hi - lo + 1) // 2
        self.samples.append((seen, self.offset_ns, self.slack_ns))
        self._next_ns = time.monotonic_ns() + PERIOD_NS

    def drift_ppm(self) -> float | None:
        """The drift of the device's clock against the host's over the kept answers
        (positive: the device's runs slow), or None with fewer than two a second apart."""
        if len(self.samples) < 2 or self.samples[-1][0] - self.samples[0][0] < 1e9:
            return None
        t, off, _ = np.array(self.samples, np.float64).T
        return float(np.polyfit((t - t[0]) * 1e-9, off, 1)[0] / 1e3)
