"""Response time over the stream's time, one line per run of ``bench/backfill_beside.py``
(its JSON's ``samples``): the median and p99 of each window of ``--window`` seconds, and
the backfill's span shaded. Runs given as LABEL=FILE.

    python bench/plot_backfill_samples.py control=c.json beside=b.json --out plot.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def windows(samples: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(window starts s, median ms, p99 ms) of the (sent at, response s) rows, per window of
    ``width`` seconds that holds any."""
    at, lat = samples[:, 0], samples[:, 1] * 1e3
    k = (at // width).astype(np.int64)
    keys = np.unique(k)
    med = np.array([np.median(lat[k == j]) for j in keys])
    p99 = np.array([np.percentile(lat[k == j], 99) for j in keys])
    return keys * width, med, p99


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=FILE (a backfill_beside.py JSON)")
    ap.add_argument("--window", type=float, default=0.5, help="seconds a point")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    last = 0.0
    for k, run in enumerate(args.runs):
        label, _, path = run.partition("=")
        d = json.loads(Path(path).read_text())
        t, med, p99 = windows(np.asarray(d["samples"], dtype=float), args.window)
        last = max(last, float(t[-1]) + args.window)
        color = f"C{k}"
        top.plot(t, med, color=color, label=f"{label} ({d['mode']})")
        bottom.plot(t, p99, color=color)
        b = d["backfill"]
        if d["mode"] != "control":
            for ax in (top, bottom):
                ax.axvspan(b["start"], b["end"], color=color, alpha=0.08)
        else:
            for ax in (top, bottom):
                ax.axvline(b["start"], color=color, linestyle=":")
    bottom.set_xlim(0, last)  # a backfill may outlast the stream
    top.set_ylabel("median response (ms)")
    bottom.set_ylabel("p99 response (ms)")
    bottom.set_xlabel(f"stream time (s), windows of {args.window:g} s; shaded: a backfill runs")
    top.legend(fontsize=8)
    top.set_title("The other query's response time around a heavy registration")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
