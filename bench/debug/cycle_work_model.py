"""Where a labelled cycle count's work lies, root by root: a host model of the device's
``cycle_roots`` (gpu/label_count.cu) as it was before ranking (every match rooted at the
start of ``cheapest_walk``), to choose its next change without device time. The ranked
count (each match from its highest-ranked vertex) is modelled by ``cycle_rank_model.py``.

    python3 -P bench/debug/cycle_work_model.py --edges 10000000 --labels 8 --out model.json

The device extends one root's paths layer by layer, one ``atomicAdd`` into the block's
count array per arrival (a row entry walked), and the join step reads one forward count per
entry. This walks the same rows for every root and reports:

- arrivals per step, in total and from rows longer than H entries (a hub's row, walked
  again for every root that reaches it): what reusing a hub's row across roots could save;
- the share of all arrivals made by roots that touch at most T distinct vertices: what
  on-chip (shared-memory) counts for small roots could serve;
- the last forward step's entries if rows longer than H were not walked there but met at
  the join (a membership test a join arrival, or the row, whichever is fewer): what
  treating hubs' rows apart could save;
- the roots' touched sizes at a few percentiles.

The count itself is checked against ``StaticSnapshot``'s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from dcsm.engine import cycle_count
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern

HUB_ROWS = (32, 128, 512, 2048)


def walk_rows(
    arrays: tuple[np.ndarray, ...], nv: int, labels: list[int], elabs: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The device's rows for the walk ``labels``/``elabs`` (``cycle_count.cycle_steps``), by
    vertex id, unranked: (offs int64 (k, nv + 1), nbrs int32)."""
    ids = np.arange(nv, dtype=np.int32)  # numbered by id: the device's rows
    return cycle_count.step_rows(arrays, nv, cycle_count.cycle_steps(labels, elabs), ids)


@njit(cache=True)
def _walk(offs, nbrs, m, lo, hi, hubs, arrivals, hub_arrivals, touched_sizes, root_work, deferred):
    """The device's walk of every root of [lo, hi) (its order does not matter here):
    arrivals[s] += entries walked at step s, hub_arrivals[s, h] those from rows longer
    than hubs[h]; touched_sizes[x - lo] and root_work[x - lo] per root; deferred[h] the
    last forward step's entries if rows longer than hubs[h] were not walked but met at the
    join instead (each such row costing min(its length, the join's distinct arrivals): a
    membership test a join arrival, or a walk of the row). Returns the count."""
    k = offs.shape[0]
    nv = offs.shape[1] - 1
    cnt = np.zeros(nv, np.uint64)
    seen = np.zeros(nv, np.bool_)
    joined = np.empty(nv, np.int32)
    touched = np.empty(nv, np.int32)
    total = np.uint64(0)
    for x in range(lo, hi):
        if offs[0, x] == offs[0, x + 1] or offs[m, x] == offs[m, x + 1]:
            continue
        cnt[x] = 1
        touched[0] = x
        nt = 1
        work = 0
        a, b = 0, 1
        fwd_a, fwd_b = 0, 0
        for s in range(k - 1):
            if s == m:  # backward: from the root again
                a, b = 0, 1
            if s == m - 1:
                fwd_a, fwd_b = a, b
            row_off = offs[s]
            start = nt
            for i in range(a, b):
                y = touched[i]
                n = row_off[y + 1] - row_off[y]
                arrivals[s] += n
                work += n
                for h in range(hubs.shape[0]):
                    if n > hubs[h]:
                        hub_arrivals[s, h] += n
                c = cnt[y] if s != m else np.uint64(1)
                for q in range(row_off[y], row_off[y + 1]):
                    z = nbrs[q]
                    if cnt[z] == 0:
                        touched[nt] = z
                        nt += 1
                    cnt[z] += c
            a, b = start, nt
            if a == b:
                break
        nj = 0  # the join's distinct arrivals (0: no join, a deferred row is never walked)
        if a < b and k - 1 >= m + 1:
            row_off = offs[k - 1]
            for i in range(a, b):
                y = touched[i]
                n = row_off[y + 1] - row_off[y]
                arrivals[k - 1] += n
                work += n
                for h in range(hubs.shape[0]):
                    if n > hubs[h]:
                        hub_arrivals[k - 1, h] += n
                for q in range(row_off[y], row_off[y + 1]):
                    total += cnt[y] * cnt[nbrs[q]]
                    if not seen[nbrs[q]]:
                        seen[nbrs[q]] = True
                        joined[nj] = nbrs[q]
                        nj += 1
            for i in range(nj):
                seen[joined[i]] = False

        # the last forward layer's rows again: deferred past hubs[h], each met at the join
        row_off = offs[m - 1]
        for h in range(hubs.shape[0]):
            cost = 0
            for i in range(fwd_a, fwd_b):
                y = touched[i]
                n = row_off[y + 1] - row_off[y]
                cost += n if n <= hubs[h] else min(n, nj)
            deferred[h] += cost
        touched_sizes[x - lo] = nt - 1
        root_work[x - lo] = work
        for i in range(nt):
            cnt[touched[i]] = 0
    return total


def share(part: float, whole: float) -> float:
    return round(float(part) / max(1.0, float(whole)), 4)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=6, help="cycle length (<= labels)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    t = time.perf_counter()
    snap = StaticSnapshot.from_graph(chunglu_graph(args.edges, labels=args.labels, seed=args.seed))
    nv = snap.num_vertices
    k = args.k
    p = Pattern.build(f"lcycle{k}", list(range(k)), [(j, (j + 1) % k, None) for j in range(k)])
    walk = cycle_count.cheapest_walk(p, cycle_count.path_counter(snap.arrays, nv))
    offs, nbrs = walk_rows(snap.arrays, nv, *walk)
    m = k // 2
    lo, hi = 0, nv  # a vertex not labelled c_0 has no first step (skipped, as on the device)
    roots = int(np.count_nonzero(snap.arrays[4][:nv] == walk[0][0]))
    print(f"snapshot and rows in {time.perf_counter() - t:.1f} s; {roots:,} roots", flush=True)
    hubs = np.array(HUB_ROWS, np.int64)
    arrivals = np.zeros(k, np.int64)
    hub_arrivals = np.zeros((k, len(hubs)), np.int64)
    sizes = np.full(hi - lo, -1, np.int64)  # -1: not a root with both first steps
    work = np.zeros(hi - lo, np.int64)
    t = time.perf_counter()
    deferred = np.zeros(len(hubs), np.int64)
    total = int(_walk(offs, nbrs, m, lo, hi, hubs, arrivals, hub_arrivals, sizes, work,
                      deferred))  # fmt: skip
    walk_s = time.perf_counter() - t
    want, _ = snap.run_all(p, emit=False)
    if total != want:
        print(f"model count {total} != the snapshot's {want}", file=sys.stderr)
        return 1
    walked = sizes >= 0
    sizes, work = sizes[walked], work[walked]
    order = np.argsort(sizes, kind="stable")
    cum = np.cumsum(work[order])
    small = {}
    for cap in (256, 512, 1024, 2048, 4096, 16384):
        n = int(np.searchsorted(sizes[order], cap, "right"))
        small[str(cap)] = {"roots": n, "work_share": share(cum[n - 1] if n else 0, cum[-1])}
    out = {
        "edges": args.edges,
        "labels": args.labels,
        "k": k,
        "count": total,
        "walk_labels": [int(x) for x in walk[0]],
        "roots": roots,
        "roots_walked": int(walked.sum()),
        "model_s": round(walk_s, 2),
        "arrivals": int(arrivals.sum()),
        "arrivals_per_step": arrivals.tolist(),
        "hub_row_share": {str(h): share(hub_arrivals[:, j].sum(), arrivals.sum())
                          for j, h in enumerate(HUB_ROWS)},
        "hub_row_share_per_step": {str(h): [share(hub_arrivals[s, j], arrivals[s])
                                            for s in range(k)] for j, h in enumerate(HUB_ROWS)},
        "small_roots": small,
        "last_forward_step": int(arrivals[m - 1]),
        "last_forward_step_hubs_deferred": {str(h): int(deferred[j])
                                            for j, h in enumerate(HUB_ROWS)},
        "touched_percentiles": {str(q): int(np.percentile(sizes, q))
                                for q in (50, 90, 99, 99.9, 100)},
    }  # fmt: skip
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
