"""``rapidflow.png``: the GPU engine against RapidFlow on the same host, one bar per count-mode
row of ``gpu_bench.py`` (RapidFlow's seconds / ours, log scale: right of 1 we are faster),
for one or more runs (e.g. before and after a change). Rows where RapidFlow timed out,
failed or was not run are left out. Needs matplotlib (the ``plot`` extra).

    python bench/plot_rapidflow_ratios.py before=OLD/gpu_bench.json \
        after=bench/results/gpu/gpu_bench.json --out bench/results/gpu/rapidflow.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plot_ratio_bars import ratio_plot_main  # noqa: E402

_SHORT = {"oracle-github": "oracle", "enron-labeled5": "enron L5", "enron-unlabeled": "enron U"}


def ratios(path: Path) -> dict[str, float]:
    """{"dataset query stream": RapidFlow same host / ours} of the count rows where
    RapidFlow finished with the same count."""
    out = {}
    for r in json.loads(path.read_text())["search"]:
        theirs = r.get("rapidflow_same_host_s")
        if r["mode"] != "count" or not theirs or r.get("rapidflow_counts_equal") is False:
            continue
        stream = "" if r["stream"] == "stream" else " " + r["stream"].removesuffix("10")
        name = f"{_SHORT.get(r['dataset'], r['dataset'])} {r['query']}{stream}"
        out[name] = theirs / r["seconds"]
    return out


def main() -> None:
    ratio_plot_main(
        __doc__, "LABEL=path/to/gpu_bench.json", ratios,
        "RapidFlow / ours (> 1: ours faster), same host and call, count mode",
        "GPU engine against RapidFlow (CPU), all updates available at once",
    )  # fmt: skip


if __name__ == "__main__":
    main()
