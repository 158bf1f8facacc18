"""``ratios.png``: the GPU static matcher against the faster of gMatch and EGSM, one bar per
row (peer seconds / ours, log scale: right of 1 we are faster), for one or more runs of
``static_bench.py`` (e.g. before and after a change). Rows where no peer finished with an
agreeing count, or a peer printed 0 ms, are left out. Needs matplotlib (the ``plot`` extra).

    python bench/plot_static_ratios.py before=bench/results/static/label-order-1127 \
        after=bench/results/static/tail-1127 --out bench/results/static/tail-1127/ratios.png

Each LABEL=DIR reads every ``*.json`` of static_bench.py directly in DIR.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plot_ratio_bars import ratio_plot_main  # noqa: E402


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
    ratio_plot_main(
        __doc__, "LABEL=folder of static_bench.py JSON files", ratios,
        "faster of gMatch and EGSM / ours (> 1: ours faster), same host and call",
        "GPU static matching against the published GPU matchers",
    )  # fmt: skip


if __name__ == "__main__":
    main()
