"""How evenly the 4-cycle hub phase's work falls on the device's warps: a host model of
gpu/ring_count.cuh's wedge_hubs items, to choose HUB_CHUNK (u a warp's item) and the
long-row split (HUB_LONG, HUB_SEG) without device time.

    python3 -P bench/debug/hub_item_model.py --edges 20000000 [--hubs 3860] [--warps 6336]

For each hub root (the top ranks of the one-label rows, ``short_cycles.one_label_rows``)
it takes every u below the root and the length of u's row below it (the wedges the u
gives). An item costs ``--u-cost`` plus ``--iter-cost`` a round of 32 wedges for each of
its u; the warps take the items in claim order, each the next free warp (list
scheduling), and the phase lasts until the last warp is done. It prints that time (the
makespan) beside the mean warp's, in the costs' units, for several HUB_CHUNK, and for the
long rows split into segments (walked after the items, as hub_rows does). A makespan near
the mean means the items are balanced and only less work a wedge can help.

Measured on an H200 (bench/results/static/session20/call5/): wedge_hubs took 43.0 ms at
HUB_CHUNK 2, 55.9 at 8 and 80.8 at 32 on the 20M-edge graph; with both costs 1 this model
gives makespans of 8,160, 15,569 and 31,379 against means of 7,610-8,135, so the tail it
predicts for large items is larger than the device's.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from numba import njit

from dcsm.engine.short_cycles import one_label_rows
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import ANY_LABEL


@njit(cache=True)
def _hub_rows(off, nbr, hubs):  # type: ignore[no-untyped-def]
    """(row length below the root, hub) for every u of the top ``hubs`` roots, in claim
    order (hub by hub from the top rank, each hub's u in row order)."""
    nv = off.shape[0] - 1
    lens, hub_of = [], []
    for h in range(min(hubs, nv)):
        r = nv - 1 - h
        for i in range(off[r], off[r + 1]):
            u = nbr[i]
            if u >= r:
                break
            a, b = off[u], off[u + 1]
            while a < b:  # the first entry of u's row at or above r
                m = (a + b) >> 1
                if nbr[m] < r:
                    a = m + 1
                else:
                    b = m
            lens.append(a - off[u])
            hub_of.append(h)
    return np.array(lens), np.array(hub_of)


@njit(cache=True)
def _makespan(costs, warps):  # type: ignore[no-untyped-def]
    """The last warp's finish and the mean warp's work when ``warps`` warps take ``costs``
    in order, each item to the warp free first (a binary heap of finish times)."""
    heap = np.zeros(warps)
    for c in costs:
        v = heap[0] + c
        i = 0
        while True:
            child = 2 * i + 1
            if child >= warps:
                break
            if child + 1 < warps and heap[child + 1] < heap[child]:
                child += 1
            if heap[child] >= v:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = v
    return heap.max(), heap.mean()


def _items(lens, hub_of, chunk, u_cost, iter_cost, long=None, seg=0):  # type: ignore[no-untyped-def]
    """Item costs of HUB_CHUNK ``chunk`` (a u's row longer than ``long`` queued, costing
    its item half a u) and the queued rows' segments of ``seg`` wedges."""
    per_u = u_cost + np.ceil(lens / 32) * iter_cost
    segments = np.zeros(0)
    if long is not None:
        queued = lens > long
        parts = [np.minimum(seg, L - np.arange(0, L, seg)) for L in lens[queued]]
        segments = u_cost + np.ceil(np.concatenate(parts or [np.zeros(0)]) / 32) * iter_cost
        per_u = np.where(queued, u_cost / 2, per_u)
    starts = np.flatnonzero(np.r_[True, hub_of[1:] != hub_of[:-1]])
    ends = np.r_[starts[1:], len(lens)]
    items = [per_u[j : min(e, j + chunk)].sum() + u_cost
             for s, e in zip(starts, ends, strict=True) for j in range(s, e, chunk)]  # fmt: skip
    return np.array(items), segments


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=2_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hubs", type=int, default=3860, help="the budget's hubs at 20M edges")
    ap.add_argument("--warps", type=int, default=132 * 48, help="warps in flight")
    ap.add_argument("--u-cost", type=float, default=1.0)
    ap.add_argument("--iter-cost", type=float, default=1.0)
    ap.add_argument("--chunks", default="1,2,8,32")
    ap.add_argument("--long", type=int, default=2048)
    args = ap.parse_args()
    g = chunglu_graph(args.edges, args.edges // 9, seed=args.seed)
    snap = StaticSnapshot.from_graph(g)
    offs, nbrs, _rank = one_label_rows(snap.arrays, snap.num_vertices, ANY_LABEL, ANY_LABEL)
    lens, hub_of = _hub_rows(offs[0], nbrs, args.hubs)
    out = {"edges": args.edges, "hubs": args.hubs, "u": len(lens), "wedges": int(lens.sum()),
           "longest_row": int(lens.max()), "rows": []}  # fmt: skip
    cost = (args.u_cost, args.iter_cost)
    for chunk in (int(c) for c in args.chunks.split(",")):
        items, _ = _items(lens, hub_of, chunk, *cost)
        span, mean = _makespan(items, args.warps)
        out["rows"].append({"chunk": chunk, "makespan": round(span), "mean": round(mean)})
    items, segments = _items(lens, hub_of, 2, *cost, long=args.long, seg=args.long)
    span, mean = _makespan(items, args.warps)
    seg_span, _ = _makespan(segments, args.warps) if len(segments) else (0.0, 0.0)
    out["rows"].append({"chunk": 2, "long": args.long, "makespan": round(span + seg_span),
                        "mean": round(mean), "segments": len(segments)})  # fmt: skip
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
