"""``response.png``: the GPU engine's response time against the update rate, for one or more
gpu_bench.json files (e.g. before and after a change), p50 as solid lines and p99 dashed,
the persistent engine at t = 0 and t = 125 us. Needs matplotlib (the ``plot`` extra).

    python bench/plot_gpu_latency.py before=OLD/gpu_bench.json \
        after=bench/results/gpu/gpu_bench.json --out bench/results/gpu/response.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="LABEL=path/to/gpu_bench.json")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    colors = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"])
    for spec in args.runs:
        label, _, path = spec.partition("=")
        rows = json.loads(Path(path).read_text())["latency"]
        for engine, short in (("DCSM persistent (b=64, t=0)", "t=0"),
                              ("DCSM persistent (b=64, t=125us)", "t=125us")):  # fmt: skip
            sel = sorted((r for r in rows if r["engine"] == engine), key=lambda r: r["rate"])
            if not sel:
                continue
            color = next(colors)
            rate = [r["rate"] for r in sel]
            ax.plot(rate, [r["resp_p50_us"] for r in sel], "-o", color=color,
                    label=f"{label} {short} p50")  # fmt: skip
            ax.plot(rate, [r["resp_p99_us"] for r in sel], "--", color=color,
                    label=f"{label} {short} p99")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("offered updates/s")
    ax.set_ylabel("response time, arrival -> start of matching (us)")
    ax.set_title("GPU engine response time (oracle-github insertion10, Q_2)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
