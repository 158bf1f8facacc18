"""Where the time of one embedding-mode run goes on the host: cProfile of ``apply`` for one
oracle-github query (default Q_9 on insertion10, 32M matches), top functions by own time;
with several batch caps or rounds, the apply times only, the caps taking turns (an A/B).

    python3 -P bench/debug/embed_profile.py [--query Q_9] [--stream insertion10] \
        [--batch-cap 4096 16384] [--rounds 2]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_bench import ORACLE_STREAMS, Runner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", default="Q_9")
    ap.add_argument("--stream", default="insertion10", choices=list(ORACLE_STREAMS))
    ap.add_argument("--batch-cap", type=int, nargs="+", default=[16384])
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    data = Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data")) / "oracle-github"
    graph = ORACLE_STREAMS[args.stream]
    query = data / "queries" / args.query
    profile = len(args.batch_cap) == 1 and args.rounds == 1
    for r in range(args.rounds):
        for cap in args.batch_cap:  # one engine at a time: its kernel holds the whole device
            runner = Runner(data / graph, data / f"{args.stream}.stream", cap)
            runner.time_once(query, count_only=True)  # warm up (kernel load, numba)
            prof = cProfile.Profile()
            t0 = time.perf_counter()
            if profile:
                prof.enable()
            seconds, pos, neg, _, _ = runner.time_once(query, count_only=False)
            prof.disable()
            total = time.perf_counter() - t0
            runner.close()
            print(f"{args.query} {args.stream} batch_cap {cap} round {r + 1}: {pos + neg} "
                  f"matches, apply {seconds:.3f} s (with undo {total:.3f} s)",
                  flush=True)  # fmt: skip
            if profile:
                pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
