"""Where a one-label 4-cycle count's wedges lie, root by root: a host model of the device's
wedge_roots (gpu/ring_count.cuh; wedge_small and wedge_parts since session 20) on the CPU
engine's ranked rows (``short_cycles.one_label_rows``), to size its hub phase (wedge_hubs,
HUB_ROOTS in gpu/label_count.py) without device time.

    python3 -P bench/debug/wedge_root_sizes.py --edges 10000000 [--out sizes.json]

For each root r (rank: degree, then id) it walks the wedges r - u - w with u, w below r,
as the device does, and records the wedges (one atomic add each on the device) and the
distinct w reached (its touched list). It reports the share of the wedges held by the
largest roots (those the whole grid walks, each with a count array of its own, which stays
in L2 while the grid is on it) and by the roots that touch few vertices (which a table in
shared memory could count). The count is checked against the CPU engine's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from dcsm.engine.short_cycles import one_label_rows
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import ANY_LABEL, Pattern


@njit(cache=True)
def _walk(off, nbr, wedges, touched_n):  # type: ignore[no-untyped-def]
    """wedges[r], touched_n[r] for every root r; returns the 4-cycles (subgraphs)."""
    nv = off.shape[0] - 1
    cnt = np.zeros(nv, np.int64)
    touched = np.empty(nv, np.int32)
    total = 0
    for r in range(nv):
        nt = 0
        work = 0
        for i in range(off[r], off[r + 1]):
            u = nbr[i]
            if u >= r:
                break
            for q in range(off[u], off[u + 1]):
                w = nbr[q]
                if w >= r:
                    break
                work += 1
                if cnt[w] == 0:
                    touched[nt] = w
                    nt += 1
                cnt[w] += 1
        for j in range(nt):
            c = cnt[touched[j]]
            total += c * (c - 1) // 2
            cnt[touched[j]] = 0
        wedges[r], touched_n[r] = work, nt
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="JSON of the shares")
    args = ap.parse_args()
    g = chunglu_graph(args.edges, args.edges // 9, seed=args.seed)
    snap = StaticSnapshot.from_graph(g)
    offs, nbrs, _rank = one_label_rows(snap.arrays, snap.num_vertices, ANY_LABEL, ANY_LABEL)
    nv = snap.num_vertices
    wedges, touched = np.zeros(nv, np.int64), np.zeros(nv, np.int64)
    t = time.perf_counter()
    cycles = _walk(offs[0], nbrs, wedges, touched)
    walk_s = time.perf_counter() - t
    c4 = Pattern.build("c4", [None] * 4, [(i, (i + 1) % 4, None) for i in range(4)], True)
    want = snap.run(c4, 0, nv, False)[0]
    if cycles != want:
        print(f"model {cycles} != CPU engine {want}", file=sys.stderr)
        return 1
    total = int(wedges.sum())
    order = np.argsort(-wedges)
    cum = np.cumsum(wedges[order])
    out = {
        "edges": args.edges, "vertices": nv, "four_cycles": int(cycles), "wedges": total,
        "touched": int(touched.sum()), "walk_s": round(walk_s, 2),
        "top_share": {k: round(float(cum[k - 1]) / total, 4)
                      for k in (10, 100, 1000, 2000, 4000, 10000)},
        "small_share": {cap: round(float(wedges[touched <= cap].sum()) / total, 4)
                        for cap in (2048, 4096, 8192)},
    }  # fmt: skip
    print(json.dumps(out, indent=1))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
