"""Whether the light rows of one engine move together: for runs of bench/gpu_bench.py taken
in turns (one folder a run, as bench/debug/compare_turns.py reads them), each row's time over
that row's median (below), averaged per run and stream over the light
rows (least and largest beside) and over the heavy ones. A row's median is taken over the
other runs of its variant (a run folder's first letter, m1 m2 m3 ...), so that what a variant
changes does not count as a mode. gpu_bench runs one engine per
stream, so a run's two streams are two engines: a mode set per engine shows as light rows
all above 1 or all below 1 in one (run, stream), while a mode set per row would scatter them
(the last lines count such cells, and whether a run's two engines agree: a mode set per
process).

    python3 bench/debug/turn_modes.py bench/results/gpu/session37/call1/turns
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

LIGHT = ("Q_0", "Q_1", "Q_2", "Q_5", "Q_6", "Q_7", "Q_10")
HEAVY = ("Q_3", "Q_4", "Q_8", "Q_9")
STREAMS = ("insertion10", "deletion10")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="the folder holding one folder a run")
    args = ap.parse_args()
    runs = sorted(p.name for p in args.root.iterdir() if (p / "gpu_bench.json").is_file())
    seconds: dict[tuple[str, str, str], float] = {}
    for run in runs:
        for row in json.loads((args.root / run / "gpu_bench.json").read_text())["search"]:
            if row["mode"] == "count":
                seconds[(run, row["stream"], row["query"])] = row["seconds"]

    def base(run: str, s: str, q: str) -> float:
        """The row's median over the other runs of the run's variant (its first letter)."""
        others = [seconds[(r, s, q)] for r in runs
                  if r != run and r[0] == run[0] and (r, s, q) in seconds]  # fmt: skip
        return statistics.median(others) if others else float("nan")

    print(f"{args.root}: each row over its median in the other runs of its variant")
    head = " | ".join(f"{s} light (least..largest) | {s} heavy" for s in STREAMS)
    print(f"| run | {head} |")
    print("|---|" + "---|---|" * len(STREAMS))
    one_side = cells_seen = 0
    agree = disagree = 0  # runs whose two streams are both one-sided: the same way or not
    for run in runs:
        cells = []
        sides = []
        for s in STREAMS:
            ratio = {q: seconds[(run, s, q)] / base(run, s, q) for q in LIGHT + HEAVY
                     if (run, s, q) in seconds}  # fmt: skip
            ratio = {q: x for q, x in ratio.items() if x == x}  # a variant of one run: none
            light = [ratio[q] for q in LIGHT if q in ratio]
            heavy = [ratio[q] for q in HEAVY if q in ratio]
            spread = f" ({min(light):.2f}..{max(light):.2f})" if light else ""
            cells_seen += bool(light)
            side = (min(light) > 1) - (max(light) < 1) if light else 0
            one_side += side != 0
            sides.append(side)
            cells.append(f"{statistics.mean(light):.3f}{spread}" if light else "")
            cells.append(f"{statistics.mean(heavy):.3f}" if heavy else "")
        print(f"| {run} | " + " | ".join(cells) + " |")
        if len(sides) == 2 and 0 not in sides:
            agree += sides[0] == sides[1]
            disagree += sides[0] != sides[1]
    print(f"\n(run, stream) cells whose light rows all lie on one side of their medians: "
          f"{one_side} of {cells_seen} (by chance, 2 in 2^{len(LIGHT)} a cell)")  # fmt: skip
    print(f"runs whose two streams (engines) are both one-sided: {agree} the same way, "
          f"{disagree} opposite")  # fmt: skip


if __name__ == "__main__":
    main()
