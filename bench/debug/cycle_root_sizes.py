"""How big the roots of a ranked labelled cycle count are, root by root: a host model of
the device's ``cycle_roots`` (gpu/label_count.cu) on the CPU engine's ranked rows
(``cycle_count.cycle_rows``), to size its next change without device time.

    python3 -P bench/debug/cycle_root_sizes.py --edges 10000000 --labels 8 --k 6 --out sizes.json

The device gives every root a block of 512 threads and about 2 (k - 1) + 2 block barriers,
and keeps its counts in the block's global array. Most roots are low-degree vertices that
walk a few entries, so that fixed cost, not the walk, may be what their time is. For each
root this walks the same rows as the device and records:

- whether it passes the claim's check (a first step below itself both ways);
- the distinct vertices its layers reach (``touched``, the count entries it needs);
- the row entries it walks.

It reports the roots and their entries by touched size: the share that one warp could
count with a table of T entries in shared memory, and the share left to whole blocks. It
also gives the largest roots' entries, and their share: one block walks a root alone, so
the largest is a lower bound on the kernel's time however many blocks there are, and the
few largest roots are where counts that fit in L2 (one root on the whole device) could
serve. The
count is checked against ``StaticSnapshot``'s.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cycle_rank_model import graph_arguments, labelled_cycle  # noqa: E402

SIZES = (16, 32, 64, 128, 256, 512, 1024, 4096)


@njit(cache=True)
def _step(row_off, nbrs, cnt, touched, nt, a, b, r):  # type: ignore[no-untyped-def]
    """Extend the paths at touched[a:b] (a == b: the root r alone, one path) by one step to
    the vertices ranked below r. Returns (the new end of touched, entries walked)."""
    work = 0
    n = 1 if a == b else b - a
    for j in range(n):
        y = r if a == b else touched[a + j]
        c = np.uint64(1) if a == b else cnt[y]
        for q in range(row_off[y], row_off[y + 1]):
            z = nbrs[q]
            if z >= r:
                break
            work += 1
            if cnt[z] == 0:
                touched[nt] = z
                nt += 1
            cnt[z] += c
    return nt, work


@njit(cache=True)
def _sizes(offs, nbrs, steps, m, roots, touched_out, work_out):  # type: ignore[no-untyped-def]
    """Walk every root r of ``roots`` (ranks) as ``cycle_roots`` does, through vertices
    ranked below r: touched_out[i] = the distinct vertices reached (-1: the claim's check
    passes it over), work_out[i] = row entries walked. Returns the count."""
    k = steps.shape[0]
    nv = offs.shape[1] - 1
    cnt = np.zeros(nv, np.uint64)
    touched = np.empty(nv, np.int32)
    total = np.uint64(0)
    for i in range(roots.shape[0]):
        r = roots[i]
        touched_out[i], work_out[i] = -1, 0
        first, back = offs[steps[0]], offs[steps[m]]
        if first[r] == first[r + 1] or nbrs[first[r]] >= r:
            continue
        if back[r] == back[r + 1] or nbrs[back[r]] >= r:
            continue
        work, nt, a, b = 0, 0, 0, 0  # touched[a:b]: the last layer (the root: a == b)
        for s in range(m):  # forward, c_1 .. c_m
            if s > 0 and a == b:
                break
            start = nt
            nt, w = _step(offs[steps[s]], nbrs, cnt, touched, nt, a, b, r)
            work += w
            a, b = start, nt
        if a < b:  # backward, c_{k-1} .. c_{m+1}, from the root again
            la = lb = nt
            for s in range(m, k - 1):
                if s > m and la == lb:
                    break
                start = nt
                nt, w = _step(offs[steps[s]], nbrs, cnt, touched, nt, la, lb, r)
                work += w
                la, lb = start, nt
            row_off = offs[steps[k - 1]]
            for j in range(la, lb):  # into c_m: each arrival times the forward paths
                y = touched[j]
                for q in range(row_off[y], row_off[y + 1]):
                    z = nbrs[q]
                    if z >= r:
                        break
                    work += 1
                    total += cnt[y] * cnt[z]
        touched_out[i], work_out[i] = nt, work
        for j in range(nt):
            cnt[touched[j]] = 0
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    graph_arguments(ap)
    ap.add_argument("--out", type=Path, help="JSON of the figures printed")
    args = ap.parse_args()
    t = time.perf_counter()
    snap, p = labelled_cycle(args)
    nv, k = snap.num_vertices, args.k
    rows = cycle_count.cycle_rows(snap.arrays, nv, p)
    sizes, works, total = [], [], 0
    for w in range(k):
        roots = np.nonzero(rows.root_walk == w)[0].astype(np.int32)
        touched, work = np.empty(len(roots), np.int64), np.empty(len(roots), np.int64)
        total += int(_sizes(rows.offs, rows.nbrs, rows.walk_steps[w], rows.m, roots, touched,
                            work))  # fmt: skip
        sizes.append(touched)
        works.append(work)
    touched, work = np.concatenate(sizes), np.concatenate(works)
    want = snap.run_all(p, False)[0]
    walked = touched >= 0
    n_roots, n_walked, entries = len(touched), int(walked.sum()), int(work.sum())
    out: dict = {
        "edges": args.edges, "labels": args.labels, "k": k, "count": total,
        "roots": n_roots, "roots_walked": n_walked, "entries": entries,
        "touched_percentiles": {
            str(q): int(np.percentile(touched[walked], q)) for q in (50, 90, 99, 99.9, 100)
        },
        "by_table_size": [],
        "largest_roots_entries": [int(x) for x in np.sort(work)[::-1][:10]],
        "largest_roots_share": {
            str(n): round(float(np.sort(work)[::-1][:n].sum()) / max(1, entries), 4)
            for n in (10, 100, 1000, 10000)
        },
    }  # fmt: skip
    for size in SIZES:
        fits = walked & (touched <= size)
        out["by_table_size"].append({
            "table": size, "roots": int(fits.sum()),
            "roots_share": round(float(fits.sum()) / max(1, n_walked), 4),
            "entries_share": round(float(work[fits].sum()) / max(1, entries), 4),
        })  # fmt: skip
    out["model_s"] = round(time.perf_counter() - t, 1)
    print(f"{args.edges:,} edges, {args.labels} labels, the labelled {k}-cycle: {n_roots:,} "
          f"roots, {n_walked:,} walked, {entries:,} entries, count {total:,}")  # fmt: skip
    print(f"touched per walked root, percentiles: {out['touched_percentiles']}")
    top = out["largest_roots_entries"]
    print(f"the largest roots' entries: {top} ({top[0] / max(1, entries):.2%} of all in one)")
    print(f"share of the entries in the largest N roots: {out['largest_roots_share']}")
    for row in out["by_table_size"]:
        print(f"touched <= {row['table']:>5}: {row['roots_share']:7.2%} of the walked roots, "
              f"{row['entries_share']:7.2%} of the entries")  # fmt: skip
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    if total != want:
        print(f"the count {total} differs from the snapshot's {want}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
