"""Does a thread that polls in a loop (as ``GpuEngine._settle`` pumps until every update has
completed) delay the service's event loop by holding the GIL? A CPU-only experiment.

    python3 -P bench/debug/gil_convoy.py [--seconds 3]

The event loop (this process's main thread) runs a timer every millisecond and records how
late each one fires. Beside it, a poller thread loops the way ``_settle`` does while it
waits: a little Python, then a numba ``nogil`` call that finds nothing new (``drain_done``
over an empty completion ring), again and again. A nogil call releases the GIL, but the
poller takes it back at once; a thread waiting for it is woken, finds it taken, and waits
for the interpreter's switch interval (``sys.getswitchinterval()``, 5 ms) before it may
force a switch. Runs: no poller; the poller; the poller sleeping 0 s after each empty round
(which releases the GIL, and on Linux sleeps the timer slack, ~50 us); the poller calling
``os.sched_yield`` instead (releases the GIL, no sleep); the poller with the switch interval
at 0.5 ms. Prints each run's timer lateness (p50, p99, max) and the poller's rounds a
second (how soon it would notice a completion).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable

import numpy as np

from dcsm.gpu import layout as L
from dcsm.gpu.rings import drain_done

MAXU = 1 << 16


class Poller(threading.Thread):
    """Loops over drain_done on an empty Done ring until stopped, calling ``idle`` (if
    given) after every round that found nothing."""

    def __init__(self, idle: Callable[[], None] | None = None) -> None:
        super().__init__(daemon=True)
        self.idle = idle
        self.stop = False
        self.rounds = 0
        done = np.zeros(MAXU, L.DONE)
        done["tau"] = -1
        self.fields = tuple(
            done[f] for f in ("tau", "outcome", "nonzero", "t_taken", "t_start", "t_finish")
        )
        self.counts = np.zeros((32, MAXU), np.uint64)
        self.live = np.zeros(1, np.int64)
        self.live_count = np.ones(1, np.bool_)
        self.out = [np.zeros(1, np.int8)] + [np.zeros(1) for _ in range(3)]

    def run(self) -> None:
        while not self.stop:
            m, *_ = drain_done(*self.fields, self.counts, 1, 1 + 16384, self.live,
                               self.live_count, 1, 1, 0, *self.out)  # fmt: skip
            self.rounds += 1
            if m == 0 and self.idle is not None:
                self.idle()


async def lateness(seconds: float) -> np.ndarray:
    """How late (s) each of the 1 ms timers of ``seconds`` fired."""
    loop = asyncio.get_running_loop()
    late: list[float] = []
    end = loop.time() + seconds
    while loop.time() < end:
        due = loop.time() + 0.001
        fired = loop.create_future()
        loop.call_at(due, fired.set_result, None)
        await fired
        late.append(loop.time() - due)
    return np.array(late)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    warm = Poller()  # numba compiles drain_done before any timing
    drain_done(*warm.fields, warm.counts, 1, 2, warm.live, warm.live_count, 1, 1, 0, *warm.out)
    interval = sys.getswitchinterval()
    print("timer lateness, ms (p50 / p99 / max); poller rounds a second")
    runs = (
        ("no poller", None, interval),
        ("poller", Poller(), interval),
        ("poller, sleep(0) when idle", Poller(lambda: time.sleep(0)), interval),
        ("poller, sched_yield when idle", Poller(os.sched_yield), interval),
        ("poller, switch interval 0.5 ms", Poller(), 0.0005),
    )
    for name, poller, switch in runs:
        sys.setswitchinterval(switch)
        if poller is not None:
            poller.start()
        t0 = time.perf_counter()
        late = asyncio.run(lateness(args.seconds)) * 1e3
        rate = poller.rounds / (time.perf_counter() - t0) if poller else 0.0
        if poller is not None:
            poller.stop = True
            poller.join()
        sys.setswitchinterval(interval)
        p50, p99 = np.percentile(late, [50, 99])
        print(f"  {name:<32} {p50:6.3f} / {p99:6.3f} / {late.max():6.3f}   {rate:,.0f}")


if __name__ == "__main__":
    main()
