"""What ``drain_done`` (gpu/rings.py: the host's read of the kernel's completion records)
costs an update, on synthetic records in host memory, with no GPU: calls of ``--per-call``
completions, one count-mode query slot whose counts are non-zero for about half of the
updates. The first call, which loads the compiled function, is left out.

    python3 -P bench/debug/drain_cost.py [--updates 1048576] [--per-call 16384]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dcsm.gpu import layout as L
from dcsm.gpu.rings import drain_done


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--updates", type=int, default=1 << 20)
    ap.add_argument("--per-call", type=int, default=1 << 14)
    args = ap.parse_args()
    maxu, qmax, n, k = 1 << 16, 32, args.updates, args.per_call
    done = np.zeros(maxu, L.DONE)
    done["tau"] = -1
    counts = np.zeros((qmax, maxu), np.uint64)
    rng = np.random.default_rng(0)
    done["nonzero"] = rng.integers(0, 2, maxu).astype(np.uint32)
    counts[0] = rng.integers(1, 5, maxu)
    fields = tuple(done[f] for f in ("tau", "outcome", "nonzero", "t_taken", "t_start", "t_finish"))
    live, live_count = np.array([0], np.int64), np.array([True])
    out = [np.zeros(n, np.int8), np.zeros(n), np.zeros(n), np.zeros(n)]
    spent, first, calls = 0.0, 1, 0
    while first + k <= n:
        s = np.arange(first, first + k) % maxu
        done["tau"][s] = np.arange(first, first + k)  # the device writes tau last
        t0 = time.perf_counter()
        m = drain_done(*fields, counts, first, first + k, live, live_count, 1, n, 0, *out)[0]
        if calls:
            spent += time.perf_counter() - t0
        calls += 1
        first += m
    timed = first - 1 - k
    print(
        f"drain_done: {spent / timed * 1e9:.1f} ns an update ({timed:,} updates, "
        f"{calls - 1} calls of {k:,})"
    )


if __name__ == "__main__":
    main()
