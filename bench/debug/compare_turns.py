"""Search rows of several bench/gpu_bench.py runs taken in turns, side by side: each row's
median over the runs of one variant (a run's folder is named by its variant letter and its
turn, e.g. m1 m2 for main, b1 b2 for a branch), then each variant's total.

The light rows run in two modes that follow how fast the host thread's core runs at the
time (session 41, call 4). ``--python-below US`` keeps only the rows whose applies found
the core fast: gpu_bench's ``host_python_us_each`` (its median) under US. Each cell then
says over how many runs its median is, and the total sums the rows every variant has.

    python3 bench/debug/compare_turns.py bench/results/gpu/session28/call4 m1 b1 m2 b2
    python3 bench/debug/compare_turns.py --python-below 1200 DIR m1 b1 m2 b2
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="the folder holding one folder a run")
    ap.add_argument("runs", nargs="+", help="run folders; the first letter names the variant")
    ap.add_argument(
        "--python-below", type=float, default=None, metavar="US",
        help="only rows whose median host_python_us_each is under US (rows of runs that "
        "did not record it are left out)",
    )  # fmt: skip
    args = ap.parse_args()
    ms: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for run in args.runs:
        for row in json.loads((args.root / run / "gpu_bench.json").read_text())["search"]:
            key = (row["query"], row["stream"], row["mode"])
            by = ms.setdefault(key, {})
            if args.python_below is not None:
                speed = row.get("host_python_us_each")
                if not speed or statistics.median(speed) >= args.python_below:
                    continue
            by.setdefault(run[0], []).append(1e3 * row["seconds"])
    variants = sorted({run[0] for run in args.runs})
    print("| query | stream | mode | " + " | ".join(f"{v} ms" for v in variants) + " |")
    print("|---|---|---|" + "---:|" * len(variants))
    total = dict.fromkeys(variants, 0.0)
    summed = 0
    for (query, stream, mode), by in ms.items():
        med = {v: statistics.median(by[v]) for v in variants if v in by}
        if len(med) == len(variants):
            summed += 1
            for v, x in med.items():
                total[v] += x
        if args.python_below is None:
            cells = " | ".join(f"{med[v]:.2f}" if v in med else "" for v in variants)
        else:
            cells = " | ".join(f"{med[v]:.2f} ({len(by[v])})" if v in med else "" for v in variants)
        print(f"| {query} | {stream} | {mode} | {cells} |")
    rows = "" if summed == len(ms) else f" ({summed} of {len(ms)} rows: those every variant has)"
    print(f"| total{rows} | | | " + " | ".join(f"{total[v]:.2f}" for v in variants) + " |")


if __name__ == "__main__":
    main()
