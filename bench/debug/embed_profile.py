"""Where the time of one embedding-mode run goes on the host: cProfile of ``apply`` for one
oracle-github query (default Q_9 on insertion10, 32M matches), top functions by own time.

    python3 -P bench/debug/embed_profile.py [--query Q_9] [--stream insertion10]
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
from gpu_bench import Runner  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", default="Q_9")
    ap.add_argument("--stream", default="insertion10")
    args = ap.parse_args()
    data = Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data")) / "oracle-github"
    graph = "initial90.graph" if args.stream == "insertion10" else "full.graph"
    runner = Runner(data / graph, data / f"{args.stream}.stream")
    query = data / "queries" / args.query
    runner.time_query(query, count_only=True)  # warm up (kernel load, numba)
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    seconds, pos, neg = runner.time_query(query, count_only=False)
    prof.disable()
    print(f"{args.query} {args.stream}: {pos + neg} matches, apply {seconds:.3f} s "
          f"(with undo {time.perf_counter() - t0:.3f} s)")  # fmt: skip
    pstats.Stats(prof).sort_stats("tottime").print_stats(14)
    runner.close()


if __name__ == "__main__":
    main()
