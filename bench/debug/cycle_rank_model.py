"""Row entries a labelled cycle count walks with every match rooted at one pattern vertex
(the device's ``cycle_roots``, the host's count before 2026-11-28) and with each match
rooted at its highest-ranked vertex (``dcsm.engine.cycle_count`` since: rank = degree, then
id; each root walks lower-ranked vertices only, rows in rank order cut at the root).

    python3 -P bench/debug/cycle_rank_model.py --edges 10000000 --labels 8 --k 6

Both walks are run in full (every root), their counts checked against each other, and the
entries counted: for the ranked walk, the entries below the root plus one read a row visit
(where the cut stops). Graph: a seeded Chung-Lu graph (``chunglu_graph``, gamma 2.3).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from dcsm.engine import cycle_count
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cycle_work_model import walk_rows  # noqa: E402


@njit(cache=True)
def _walk(offs, nbrs, steps, m, roots, bound):  # type: ignore[no-untyped-def]
    """Every root of ``roots`` walked along rows ``offs[steps[s]]`` (vertices numbered as
    the rows are), stopping each row at the first vertex >= bound[root] (rows in that
    order). Returns (count, entries walked, row visits)."""
    k = steps.shape[0]
    nv = offs.shape[1] - 1
    cnt = np.zeros(nv, np.uint64)
    touched = np.empty(nv, np.int32)
    total, work, visits = np.uint64(0), 0, 0
    for r in roots:
        lim = bound[r]
        cnt[r] = 1
        touched[0] = r
        nt, a, b = 1, 0, 1
        for s in range(k - 1):
            if s == m:
                a, b = 0, 1
            row_off = offs[steps[s]]
            start = nt
            for i in range(a, b):
                y = touched[i]
                c = cnt[y] if s != m else np.uint64(1)
                visits += 1
                for q in range(row_off[y], row_off[y + 1]):
                    z = nbrs[q]
                    if z >= lim:
                        break
                    work += 1
                    if cnt[z] == 0:
                        touched[nt] = z
                        nt += 1
                    cnt[z] += c
            a, b = start, nt
        row_off = offs[steps[k - 1]]
        for i in range(a, b):
            y = touched[i]
            visits += 1
            for q in range(row_off[y], row_off[y + 1]):
                z = nbrs[q]
                if z >= lim:
                    break
                work += 1
                total += cnt[y] * cnt[z]
        for i in range(nt):
            cnt[touched[i]] = 0
    return total, work, visits


def graph_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of the labelled cycle models: the graph and the cycle's length."""
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=8)
    ap.add_argument("--k", type=int, default=6, help="cycle length (<= labels)")
    ap.add_argument("--seed", type=int, default=0)


def labelled_cycle(args: argparse.Namespace) -> tuple[StaticSnapshot, Pattern]:
    """The seeded Chung-Lu graph of ``args`` as a snapshot, and the cycle of ``args.k``
    vertices labelled 0 .. k - 1."""
    snap = StaticSnapshot.from_graph(chunglu_graph(args.edges, labels=args.labels, seed=args.seed))
    k = args.k
    return snap, Pattern.build(
        f"lcycle{k}", list(range(k)), [(j, (j + 1) % k, None) for j in range(k)]
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    graph_arguments(ap)
    args = ap.parse_args()
    t = time.perf_counter()
    snap, p = labelled_cycle(args)
    nv, k = snap.num_vertices, args.k
    vlab = snap.arrays[4][:nv]
    walk = cycle_count.cheapest_walk(p, cycle_count.path_counter(snap.arrays, nv))
    offs, nbrs = walk_rows(snap.arrays, nv, *walk)
    roots = np.nonzero(vlab == walk[0][0])[0].astype(np.int32)
    no_bound = np.full(nv, np.iinfo(np.int32).max, np.int64)
    plain = _walk(offs, nbrs, np.arange(k, dtype=np.int32), k // 2, roots, no_bound)
    rows = cycle_count.cycle_rows(snap.arrays, nv, p)
    ranks = np.arange(nv, dtype=np.int64)  # the ranked rows number vertices by rank
    total, work, visits = 0, 0, 0
    for w in range(k):
        ranked_roots = np.nonzero(rows.root_walk == w)[0].astype(np.int32)
        c, e, v = _walk(rows.offs, rows.nbrs, rows.walk_steps[w], rows.m, ranked_roots, ranks)
        total, work, visits = total + int(c), work + e, visits + v
    print(f"{args.edges:,} edges, {args.labels} labels, the labelled {k}-cycle, "
          f"{time.perf_counter() - t:.1f} s")  # fmt: skip
    print(f"one root vertex: {plain[1]:,} entries, {plain[2]:,} row visits, count {plain[0]:,}")
    print(f"highest-ranked root: {work:,} entries, {visits:,} row visits, count {total:,}")
    if total != int(plain[0]):
        print("the counts differ", file=sys.stderr)
        return 1
    print(f"entries {plain[1] / max(1, work):.2f}x fewer; entries plus row visits "
          f"{(plain[1] + plain[2]) / max(1, work + visits):.2f}x fewer")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
