"""One GpuEngine.apply call as a picture: the host's steps and the device's batches against
time, from ``bench/debug/apply_profile.py``'s output, several calls stacked (e.g. before and
after a change) so that their batches can be compared at a glance. Needs matplotlib (the
``plot`` extra).

    python3 bench/debug/plot_apply_timeline.py \
        main=bench/results/gpu/session30/call1/prof-o-Q_1-deletion10.txt \
        branch=bench/results/gpu/session30/call1/prof-l-Q_1-deletion10.txt \
        --cap 16384 --out bench/results/gpu/session30/timeline-Q_1-deletion10.png

Each call takes two lanes. The host's: admission, encoding and the ring's commits (each
piece of updates), the other steps in grey, then the wait for the device (``_settle``, its
pumps). The device's: each batch from its first record taken to its first match started
(reading it, then the updater's jobs), then to its last update finished (matching). A
vertical line marks when the call returned. apply_profile prints
the device's times per group of updates taken at one moment; a batch is a run of groups
whose matching started within ``--gap`` ms of each other (the batches of a light row start
0.2 ms or more apart).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path

_STEP = re.compile(r"^\s+(\S+?)(?: x\d+)?\s+([\d.]+)\s+([\d.]+)\s*$")
_GROUP = re.compile(r"^\s+\d+\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
_COLORS = {"admit": "tab:blue", "_encode": "tab:orange", "ring.commit": "tab:red",
           "_settle": "whitesmoke", "_pump": "whitesmoke"}  # fmt: skip


@dataclass
class Batch:
    size: int
    taken_first: float
    taken_last: float
    start: float
    finish: float


@dataclass
class Call:
    """One apply call of apply_profile's output, times in ms after the call began."""

    apply_ms: float
    steps: list[tuple[str, float, float]] = field(default_factory=list)
    batches: list[Batch] = field(default_factory=list)


def read_call(path: Path, cap: int | None, gap: float) -> Call:
    """The call printed under ``== batch_cap cap`` (the first section when None)."""
    sections = path.read_text().split("== batch_cap ")[1:]
    if not sections:
        raise SystemExit(f"{path}: no '== batch_cap' section (not apply_profile's output?)")
    text = sections[0]
    if cap is not None:
        found = [s for s in sections if s.split()[0] == str(cap)]
        if not found:
            raise SystemExit(f"{path}: no section for batch_cap {cap}")
        text = found[0]
    lines = text.splitlines()
    apply_ms = float(re.search(r"apply: ([\d.]+) ms", text).group(1))  # type: ignore[union-attr]
    call = Call(apply_ms)
    groups: list[tuple[int, float, float, float]] = []
    part = "head"
    for line in lines:
        if line.startswith("host: step"):
            part = "host"
        elif line.startswith("host totals"):
            part = "between"
        elif line.startswith("batch  size"):
            part = "device"
        elif part == "host" and (m := _STEP.match(line)):
            call.steps.append((m.group(1), float(m.group(2)), float(m.group(3))))
        elif part == "device" and (m := _GROUP.match(line)):
            size, taken, start, finish = m.groups()
            groups.append((int(size), float(taken), float(start), float(finish)))
    for size, taken, start, finish in sorted(groups, key=lambda g: g[2]):
        last = call.batches[-1] if call.batches else None
        if last is not None and start - last.start <= gap:
            last.size += size
            last.taken_first = min(last.taken_first, taken)
            last.taken_last = max(last.taken_last, taken)
            last.finish = max(last.finish, finish)
        else:
            call.batches.append(Batch(size, taken, taken, start, finish))
    return call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("calls", nargs="+", help="LABEL=apply_profile output file")
    ap.add_argument("--cap", type=int, default=None, help="the batch_cap section (default: first)")
    ap.add_argument("--gap", type=float, default=0.12, help="ms between one batch's starts")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    calls = []
    for spec in args.calls:
        label, sep, path = spec.partition("=")
        if not sep:
            raise SystemExit(f"expected LABEL=FILE, got {spec!r}")
        calls.append((label, read_call(Path(path), args.cap, args.gap)))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 1.2 + 1.1 * len(calls)))
    ticks, names = [], []
    for k, (label, call) in enumerate(reversed(calls)):
        host_y, dev_y = 2 * k + 1, 2 * k
        for name, a, b in call.steps:
            ax.barh(host_y, b - a, left=a, height=0.7, color=_COLORS.get(name, "darkgrey"))
        for bt in call.batches:
            ax.barh(dev_y, bt.taken_last - bt.taken_first, left=bt.taken_first, height=0.7,
                    color="tab:purple")  # fmt: skip
            ax.barh(dev_y, bt.start - bt.taken_last, left=bt.taken_last, height=0.7,
                    color="tab:green", edgecolor="white")  # fmt: skip
            ax.barh(dev_y, bt.finish - bt.start, left=bt.start, height=0.35, color="tab:olive")
            ax.text((bt.taken_first + bt.start) / 2, dev_y, f"{bt.size:,}", ha="center",
                    va="center", fontsize=7, color="white")  # fmt: skip
        ax.plot([call.apply_ms] * 2, [dev_y - 0.4, host_y + 0.4], color="black", lw=0.8)
        ax.text(call.apply_ms, (dev_y + host_y) / 2, f" returned\n {call.apply_ms:.2f} ms",
                fontsize=7, va="center")  # fmt: skip
        ticks += [dev_y, host_y]
        names += [f"{label}: device", f"{label}: host"]
    ax.set_yticks(ticks, names, fontsize=8)
    ax.set_xlabel("ms after the apply call began")
    handles = [
        plt.Rectangle((0, 0), 1, 1, color=c)
        for c in ("tab:blue", "tab:orange", "tab:red", "darkgrey", "whitesmoke", "tab:purple",
                  "tab:green", "tab:olive")
    ]  # fmt: skip
    labels = ["admit", "encode", "ring commit", "other host steps", "waiting (pumps)",
              "records taken", "updater jobs", "matching"]  # fmt: skip
    ax.legend(handles, labels, fontsize=7, ncol=8, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.set_xlim(0, 1.12 * max(call.apply_ms for _, call in calls))
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
