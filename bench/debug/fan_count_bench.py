"""Fan-outs counted on the CPU engine without a search (``dcsm/engine/tree_count.py``, leaves
alike of one parent by a falling factorial): one seeded Chung-Lu graph with 8 vertex labels,
each pattern's count and seconds, the unlabelled star's checked against the degree formula
(the sum over vertices of d (d - 1) ... (d - 4)).

    python3 -P bench/debug/fan_count_bench.py --edges 43000000 --out fans-43m.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from dcsm.engine.snapshot import StaticSnapshot
from dcsm.engine.tree_count import tree_plan
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern

_ = None
SPOKES = [(0, i, _) for i in range(1, 6)]
PATTERNS = {
    "star6 unlabelled": Pattern.build("star6", [_] * 6, SPOKES),
    "fan5 (label 0 to five 1s)": Pattern.build("fan5", [0] + [1] * 5, SPOKES),
    "fan5, distinct": Pattern.build("fan5d", [0] + [1] * 5, SPOKES, True),
    "two-level fan (0 to two 1s, each to two of 2 and 4)": Pattern.build(
        "fan2x2", [0, 1, 3, 2, 2, 4, 4],
        [(0, 1, _), (0, 2, _), (1, 3, _), (1, 4, _), (2, 5, _), (2, 6, _)],
    ),
}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    t = time.perf_counter()
    g = chunglu_graph(args.edges, labels=8, seed=args.seed)
    snap = StaticSnapshot.from_graph(g)
    out: dict = {"edges": args.edges, "snapshot_s": round(time.perf_counter() - t, 1), "rows": []}
    deg = np.bincount(np.concatenate([g.src, g.dst])).astype(object)
    star = int(sum(deg * (deg - 1) * (deg - 2) * (deg - 3) * (deg - 4)))
    for name, p in PATTERNS.items():
        assert tree_plan(p) is not None, name
        t = time.perf_counter()
        count, _rows = snap.run_all(p, emit=False)
        row = {"pattern": name, "count": str(count), "seconds": round(time.perf_counter() - t, 3)}
        if p.name == "star6":
            row["degree_formula_equal"] = count == star
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
