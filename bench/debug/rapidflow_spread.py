"""RapidFlow's run-to-run spread on oracle-github's rows: each (query, stream) run ``--runs``
times on this host by ``bench/rapidflow.py`` (as ``gpu_bench.py --rapidflow-repeat`` runs a
light row), every run's search time, the median, and the largest over the smallest.

    python3 -P bench/debug/rapidflow_spread.py --rapidflow PATH/RapidFlow.out [--data DIR] \
        [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_bench import ORACLE, ORACLE_STREAMS  # noqa: E402
from rapidflow import RapidFlow  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rapidflow", type=Path, required=True)
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data"))
    )
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    og = args.data / "oracle-github"
    rf = RapidFlow(args.rapidflow, 15, repeat=args.runs)
    first = median = 0.0
    for stream, graph in ORACLE_STREAMS.items():
        for q in ORACLE:
            r = rf.run(og / graph, og / "queries" / q, og / f"{stream}.stream")
            each = r["seconds_each"]
            if r["seconds"] is None:
                print(f"{stream} {q}: {r['failed'] or 'timed out'}")
                continue
            first += each[0]
            median += r["seconds"]
            runs = " ".join(f"{x * 1e3:.2f}" for x in each)
            print(f"{stream} {q}: {r['matches']:,} matches; runs {runs} ms; median "
                  f"{r['seconds'] * 1e3:.2f} ms; spread {max(each) / min(each):.2f}x")  # fmt: skip
    print(f"total of the first runs {first:.4f} s, of the medians {median:.4f} s")


if __name__ == "__main__":
    main()
