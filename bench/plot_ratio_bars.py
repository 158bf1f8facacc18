"""Horizontal bars of ratios, one per row and run (log scale, 1.0 marked: right of it we are
faster): what ``plot_static_ratios.py`` and ``plot_rapidflow_ratios.py`` draw."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def save_ratio_bars(
    runs: list[tuple[str, dict[str, float]]], xlabel: str, title: str, out: Path
) -> int:
    """Draw each run's {row: ratio} (the rows every run has, in the last run's order) into
    ``out``; returns how many rows were drawn. Needs matplotlib (the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [name for name in runs[-1][1] if all(name in r for _, r in runs)]
    height = 0.8 / len(runs)
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(rows) * len(runs) + 1.5))
    for k, (label, r) in enumerate(runs):
        ys = [i + k * height for i in range(len(rows))]
        ax.barh(ys, [r[name] for name in rows], height=height, label=label)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(rows))], rows, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return len(rows)


def ratio_plot_main(
    doc: str, run_help: str, ratios: Callable[[Path], dict[str, float]], xlabel: str,
    title: str,
) -> None:  # fmt: skip
    """A plot script's command line: ``LABEL=PATH ... --out FILE``, each PATH read by
    ``ratios``, the bars drawn by :func:`save_ratio_bars`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("runs", nargs="+", help=run_help)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    runs = [(label, ratios(Path(path))) for label, _, path in
            (spec.partition("=") for spec in args.runs)]  # fmt: skip
    n = save_ratio_bars(runs, xlabel, title, args.out)
    print(f"wrote {args.out} ({n} rows)")
