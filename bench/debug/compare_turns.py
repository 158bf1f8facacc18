"""Search rows of several bench/gpu_bench.py runs taken in turns, side by side: each row's
median over the runs of one variant (a run's folder is named by its variant letter and its
turn, e.g. m1 m2 for main, b1 b2 for a branch), then each variant's total.

    python3 bench/debug/compare_turns.py bench/results/gpu/session28/call4 m1 b1 m2 b2
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
    args = ap.parse_args()
    ms: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for run in args.runs:
        for row in json.loads((args.root / run / "gpu_bench.json").read_text())["search"]:
            key = (row["query"], row["stream"], row["mode"])
            ms.setdefault(key, {}).setdefault(run[0], []).append(1e3 * row["seconds"])
    variants = sorted({run[0] for run in args.runs})
    print("| query | stream | mode | " + " | ".join(f"{v} ms" for v in variants) + " |")
    print("|---|---|---|" + "---:|" * len(variants))
    total = dict.fromkeys(variants, 0.0)
    for (query, stream, mode), by in ms.items():
        med = {v: statistics.median(by[v]) for v in variants if v in by}
        for v, x in med.items():
            total[v] += x
        cells = " | ".join(f"{med[v]:.2f}" if v in med else "" for v in variants)
        print(f"| {query} | {stream} | {mode} | {cells} |")
    print("| total | | | " + " | ".join(f"{total[v]:.2f}" for v in variants) + " |")


if __name__ == "__main__":
    main()
