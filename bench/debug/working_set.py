"""What a scale-up insertion copies, batch by batch, on the host (no GPU): the slab runs
each kernel batch writes, and what a list layout of a sorted base plus a sorted delta would
write instead.

    python3 -P bench/debug/working_set.py --graph /tmp/g43.npz [--batch 16384] [--out X.json]

The graph is split as ``bench/scale_up_bench.py`` splits it (the same seed: 90 % loaded,
the other 10 % inserted in its order), and the insertion is cut into batches of ``--batch``
consecutive updates, as the kernel takes them under a backlog. Today a batch gives every
vertex it touches a new version whose run (2^c slabs, c the smallest class that holds the
list) is a merged copy of the whole list, so a hub is copied whole by nearly every batch.
The delta layout copies only the vertex's delta merged with the batch's entries, and
merges base and delta into a new base once the delta passes ``1 / --merge`` of the base.

Reports, per batch: vertices touched, slabs of the new runs (and the share of vertices of
degree >= ``--hub``), lists that move to a larger class, and the delta layout's slabs; and,
for each ``--in-flight`` k, the most slabs of replaced runs held at once while k batches are
in flight (the pool's need above what is live, by layout).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scale_up_bench as sub  # noqa: E402

from dcsm.gpu.mvg import ceil_log2  # noqa: E402
from dcsm.graphio import read_graph  # noqa: E402


def run_slabs(deg: np.ndarray) -> np.ndarray:
    """Slabs of the run a list of ``deg`` entries takes: 2^c, c the smallest class with
    2^c * 32 >= deg (the rule of gpu/mvg.py build_image); 0 for an empty list."""
    return np.where(deg > 0, np.int64(1) << ceil_log2((deg + 31) // 32).astype(np.int64), 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True, help="a graph file (dcsm gen-graph's .npz)")
    ap.add_argument("--share", type=float, default=0.1, help="share of edges inserted")
    ap.add_argument("--seed", type=int, default=0, help="scale_up_bench's --seed")
    ap.add_argument("--batch", type=int, default=16384, help="updates a kernel batch takes")
    ap.add_argument("--hub", type=int, default=4096, help="degree from which a vertex is a hub")
    ap.add_argument("--merge", type=int, default=8, help="delta merged at base / MERGE")
    ap.add_argument(
        "--in-flight",
        type=int,
        nargs="*",
        default=[2, 4],
        help="batches in flight (maxu / batch) to count held runs for",
    )
    ap.add_argument("--out", type=Path, help="write the summary here as JSON")
    args = ap.parse_args()

    g = read_graph(args.graph)
    initial, stream = sub.split(g, args.share, args.seed)
    ids = np.unique(np.concatenate([g.src, g.dst]))
    ends0 = np.searchsorted(ids, np.concatenate([initial.src, initial.dst]))
    deg = np.bincount(ends0, minlength=len(ids)).astype(np.int64)
    u, v = np.searchsorted(ids, stream.u), np.searchsorted(ids, stream.v)
    live_before = int(run_slabs(deg).sum())
    base, delta = deg.copy(), np.zeros(len(ids), np.int64)
    rows = []
    for lo in range(0, len(u), args.batch):
        touched, cnt = np.unique(np.concatenate([u[lo : lo + args.batch], v[lo : lo + args.batch]]),
                                 return_counts=True)  # fmt: skip
        old = run_slabs(deg[touched])
        old_delta, old_base = run_slabs(delta[touched]), run_slabs(base[touched])
        deg[touched] += cnt
        new = run_slabs(deg[touched])
        delta[touched] += cnt
        merge = delta[touched] * args.merge > base[touched]
        layout = np.where(merge, new, run_slabs(delta[touched]))
        layout_freed = np.where(merge, old_base + old_delta, old_delta)
        base[touched[merge]] = deg[touched[merge]]
        delta[touched[merge]] = 0
        hub = deg[touched] >= args.hub
        rows.append((len(touched), int(new.sum()), int(new[hub].sum()), int((new > old).sum()),
                     int(layout.sum()), int(old.sum()), int(layout_freed.sum())))  # fmt: skip
    r = np.array(rows, np.int64)
    # Runs a batch replaces wait for the collector until every update before the batch is
    # done: with k batches in flight (maxu / batch), the replaced runs of the last k + 1
    # batches are held at once (the most over the insertion).
    held = {
        f"held_slabs_{k}_in_flight": {
            name: int(np.convolve(r[:, col], np.ones(k + 1, np.int64), "valid").max())
            for name, col in (("whole_lists", 5), ("delta_layout", 6))
        }
        for k in args.in_flight
        if k + 1 <= len(r)
    }
    out = {
        "graph": args.graph, "batch": args.batch, "batches": len(rows), "updates": len(u),
        "live_slabs_before": live_before, "live_slabs_after": int(run_slabs(deg).sum()),
        "touched_per_batch": round(float(r[:, 0].mean())),
        "new_run_slabs_per_batch": round(float(r[:, 1].mean())),
        "new_run_slabs_max": int(r[:, 1].max()),
        "hub_share_of_new_runs": round(float(r[:, 2].sum() / max(1, r[:, 1].sum())), 3),
        "lists_moving_class_per_batch": round(float(r[:, 3].mean()), 1),
        "delta_layout_slabs_per_batch": round(float(r[:, 4].mean())),
        "new_run_slabs_total": int(r[:, 1].sum()),
        "delta_layout_slabs_total": int(r[:, 4].sum()),
        **held,
    }  # fmt: skip
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
