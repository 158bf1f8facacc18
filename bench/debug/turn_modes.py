"""Whether the light rows move together, and what sets their mode: runs of
bench/gpu_bench.py taken in turns (one folder a run, as bench/debug/compare_turns.py reads
them). Each row's time is taken over that row's median in the other runs of its variant (a
run folder's first letter: m1 m2 m3 ...), so that what a variant changes does not count;
then averaged per run and stream over the light rows (least and largest beside) and over
the heavy ones.

gpu_bench runs one engine per stream, one after the other in one process. A cell (run,
stream) is one-sided when every light row lies above 1, or every one below: by chance 2 in
2^7 a cell, were the rows' noise their own. The last lines count one-sided cells, and how
often two one-sided cells agree: the two engines of one process, and the last engine of a
process with the first of the next (in the order the call's time.txt beside the folder
lists the runs). Agreement within a process but not across adjacent processes says the
mode is set per process, not by something that drifts over a call. Rows that record their
host cores (gpu_bench's host_cpu_each, since session 38) show them beside the light rows.

    python3 bench/debug/turn_modes.py bench/results/gpu/session37/call1/turns [more ...]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path

LIGHT = ("Q_0", "Q_1", "Q_2", "Q_5", "Q_6", "Q_7", "Q_10")
HEAVY = ("Q_3", "Q_4", "Q_8", "Q_9")
STREAMS = ("insertion10", "deletion10")


def run_order(root: Path, runs: list[str]) -> list[str]:
    """The runs in the order they ran (``NAME rc N at S s`` lines of the time.txt beside
    ``root``), else by name."""
    log = root.parent / "time.txt"
    text = log.read_text() if log.is_file() else ""
    order = [m.group(1) for m in re.finditer(r"^(\w+) rc -?\d+ at \d+ s", text, re.MULTILINE)]
    ran = [r for r in dict.fromkeys(order) if r in runs]
    return ran if len(ran) == len(runs) else runs


def tally(pairs: list[tuple[int, int]]) -> str:
    both = [(a, b) for a, b in pairs if a and b]
    same = sum(a == b for a, b in both)
    return f"{same} the same way, {len(both) - same} opposite"


def folder(root: Path, counts: dict[str, list]) -> None:
    runs = sorted(p.name for p in root.iterdir() if (p / "gpu_bench.json").is_file())
    seconds: dict[tuple[str, str, str], float] = {}
    cores: dict[tuple[str, str], set[int]] = {}  # the host cores of a cell's timed applies
    for run in runs:
        for row in json.loads((root / run / "gpu_bench.json").read_text())["search"]:
            if row["mode"] == "count":
                seconds[(run, row["stream"], row["query"])] = row["seconds"]
                cores.setdefault((run, row["stream"]), set()).update(row.get("host_cpu_each", []))

    def ratios(run: str, s: str, queries: tuple[str, ...]) -> list[float]:
        out = []
        for q in queries:
            others = [seconds[(r, s, q)] for r in runs
                      if r != run and r[0] == run[0] and (r, s, q) in seconds]  # fmt: skip
            if others and (run, s, q) in seconds:
                out.append(seconds[(run, s, q)] / statistics.median(others))
        return out

    print(f"{root}: each row over its median in the other runs of its variant")
    head = " | ".join(f"{s} light (least..largest) | {s} heavy" for s in STREAMS)
    print(f"| run | {head} |")
    print("|---|" + "---|---|" * len(STREAMS))
    side: dict[tuple[str, str], int] = {}  # 1: every light row above 1, -1: below, 0: neither
    for run in run_order(root, runs):
        cells = []
        for s in STREAMS:
            light, heavy = ratios(run, s, LIGHT), ratios(run, s, HEAVY)
            side[(run, s)] = (min(light) > 1) - (max(light) < 1) if light else 0
            if light:
                h = statistics.mean(heavy) if heavy else float("nan")
                counts["cells"].append((side[(run, s)], statistics.mean(light), h))
            spread = f" ({min(light):.2f}..{max(light):.2f})" if light else ""
            ran_on = sorted(cores.get((run, s), ()))
            on = f" cores {','.join(map(str, ran_on))}" if ran_on else ""
            cells.append(f"{statistics.mean(light):.3f}{spread}{on}" if light else "")
            cells.append(f"{statistics.mean(heavy):.3f}" if heavy else "")
        print(f"| {run} | " + " | ".join(cells) + " |")
    ordered = run_order(root, runs)
    for run, nxt in zip(ordered, ordered[1:] + [""], strict=True):
        counts["within"].append((side[(run, STREAMS[0])], side[(run, STREAMS[1])]))
        if nxt:
            counts["across"].append((side[(run, STREAMS[1])], side[(nxt, STREAMS[0])]))
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("roots", type=Path, nargs="+", help="folders holding one folder a run")
    args = ap.parse_args()
    counts: dict[str, list] = {"cells": [], "within": [], "across": []}
    for root in args.roots:
        folder(root, counts)
    slow = [(m, h) for c, m, h in counts["cells"] if c > 0]
    fast = [(m, h) for c, m, h in counts["cells"] if c < 0]

    def means(cells: list[tuple[float, float]]) -> str:
        light = statistics.mean(m for m, _ in cells)
        heavy = [h for _, h in cells if h == h]
        return f"light {light:.3f}, heavy {statistics.mean(heavy):.3f}" if heavy else f"{light:.3f}"

    print(f"(run, stream) cells whose light rows all lie on one side: {len(slow) + len(fast)} "
          f"of {len(counts['cells'])} (by chance, 2 in 2^{len(LIGHT)} a cell); their rows' "
          f"means: {means(slow)} in the {len(slow)} slow ones, {means(fast)} in the "
          f"{len(fast)} fast ones"
          if slow and fast else "no one-sided cells of both kinds")  # fmt: skip
    print(f"one-sided pairs, the two engines of one process: {tally(counts['within'])}")
    print(f"one-sided pairs, a process's last engine and the next one's first: "
          f"{tally(counts['across'])}")  # fmt: skip


if __name__ == "__main__":
    main()
