"""``ratios.png``: the GPU static matcher against the faster of gMatch and EGSM, one bar per
row (peer seconds / ours, log scale: right of 1 we are faster), for one or more runs of
``static_bench.py`` (e.g. before and after a change). Rows where no peer finished with an
agreeing count, or a peer printed 0 ms, are left out. Needs matplotlib (the ``plot`` extra).

    python bench/plot_static_ratios.py before=bench/results/static/label-order-1127 \
        after=bench/results/static/tail-1127 --out bench/results/static/tail-1127/ratios.png

Each LABEL=DIR reads every ``*.json`` of static_bench.py directly in DIR.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def ratios(folder: Path) -> dict[str, float]:
    """{"set pattern": faster peer / ours} of the rows with a measured peer time."""
    out = {}
    for path in sorted(folder.glob("*.json")):
        for r in json.loads(path.read_text())["rows"]:
            if r.get("peer_ratio") is not None and r.get("faster_peer_s"):
                graph = r["graph"].split("/")[0].split(" (")[0]
                out[f"{graph} {r['pattern']}"] = float(r["peer_ratio"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="LABEL=folder of static_bench.py JSON files")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [(label, ratios(Path(path))) for label, _, path in
            (spec.partition("=") for spec in args.runs)]  # fmt: skip
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
    ax.set_xlabel("faster of gMatch and EGSM / ours (> 1: ours faster), same host and call")
    ax.set_title("GPU static matching against the published GPU matchers")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out} ({len(rows)} rows)")


if __name__ == "__main__":
    main()
