"""How much work a 6-vertex labelled backfill is, by two methods, without a GPU (issue 18's
"6-vertex backfill on a 40M+ edge graph in seconds").

    python3 -P bench/debug/cycle_walk_model.py --edges 43000000 --labels 8 [--check-edges 20000]

The pattern is ``bench/backfill_beside.py``'s ``lcycle6`` (and ``lpath6``): vertices labelled
0..5 along a cycle (a path). With every pattern vertex's label different, a walk whose labels
follow the pattern's never visits a vertex twice, so walks are paths and counts of walks are
exact counts of partial matches, computed here with one sparse product a step (numpy
``bincount`` over the directed edges whose endpoints carry the step's labels):

* **Enumeration** (what the static matcher does: extend a start edge one pattern vertex at a
  time, depth first): its partial matches are the label-ordered paths of 1..5 edges from a
  label-i vertex, for the rotation that starts at label i; the cycle's matches are the
  5-edge paths whose ends are adjacent, checked one path at a time. Work: the sum of the
  levels' paths (the 5-edge ones dominate).
* **Meeting in the middle** (the CPU engine's count now, ``dcsm/engine/cycle_count.py``):
  the cycle through labels i and i+3 is two 3-edge paths from the same label-i vertex x to
  the same label-(i+3) vertex y, so its count is sum over x of sum over y of F[x, y] *
  B[x, y], F and B the numbers of such paths each way round; for each x both rows are
  accumulated (keyed by y), so the work is at most the 3-edge paths from label i both ways
  round, never the 5-edge ones.

With ``--count-path`` it then counts ``lpath6`` exactly on the same graph as the CPU engine
now does (:mod:`dcsm.engine.tree_count`: a tree whose vertex labels are all different is
counted by dynamic programming, one pass over the adjacency per pattern edge), timed, and
stops unless that count equals the walks' (the 5-edge paths from label 0, float64).

With ``--count-cycle`` it counts ``lcycle6`` exactly on the same graph as the CPU engine now
does (:mod:`dcsm.engine.cycle_count`: meeting in the middle, slices of roots on every core),
timed.

With ``--check-edges N`` it also builds a graph of N edges, counts the cycle by meeting in
the middle (per start vertex, dictionaries) and by the CPU engine's static count, and
stops if they differ: the identity above, checked.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Graph, Pattern

K = 6  # pattern vertices, labelled 0..K-1 along the cycle


def directed(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, v, label by vertex index) with both orientations of every edge, as indices."""
    order = np.argsort(g.vertex_ids)
    ids = g.vertex_ids[order]
    s = order[np.searchsorted(ids, g.src)]
    d = order[np.searchsorted(ids, g.dst)]
    return np.concatenate([s, d]), np.concatenate([d, s]), g.vertex_labels


def path_counts(u: np.ndarray, v: np.ndarray, lab: np.ndarray, labels: list[int]) -> list[float]:
    """Paths (= walks, the labels being distinct) along ``labels``: the number with 0, 1,
    ..., len(labels) - 1 edges (float64: estimates past 2^53)."""
    nv = len(lab)
    w = (lab == labels[0]).astype(np.float64)
    out = [float(w.sum())]
    lu, lv = lab[u], lab[v]
    for a, b in zip(labels[:-1], labels[1:], strict=True):
        m = (lu == a) & (lv == b)
        w = np.bincount(v[m], weights=w[u[m]], minlength=nv)
        out.append(float(w.sum()))
    return out


def meet_count(u: np.ndarray, v: np.ndarray, lab: np.ndarray) -> int:
    """The labelled 6-cycle's matches by meeting in the middle at labels 0 and 3 (slow:
    Python dictionaries a start vertex; for the check on a small graph)."""
    adj: dict[int, list[int]] = {}
    for a, b in zip(u.tolist(), v.tolist(), strict=True):
        adj.setdefault(a, []).append(b)

    def rows(x: int, labels: tuple[int, ...]) -> dict[int, int]:
        cur = {x: 1}
        for want in labels:
            nxt: dict[int, int] = {}
            for y, c in cur.items():
                for z in adj.get(y, ()):
                    if lab[z] == want:
                        nxt[z] = nxt.get(z, 0) + c
            cur = nxt
        return cur

    total = 0
    for x in np.flatnonzero(lab == 0).tolist():
        f, b = rows(x, (1, 2, 3)), rows(x, (5, 4, 3))
        total += sum(c * b.get(y, 0) for y, c in f.items())
    return total


def check(edges: int, labels: int) -> None:
    from dcsm.engine.cpu import CpuEngine

    g = chunglu_graph(edges, max(50, edges // 4), labels=labels, seed=1)
    u, v, lab = directed(g)
    cycle = Pattern.build("lcycle6", list(range(K)), [(i, (i + 1) % K, None) for i in range(K)])
    eng = CpuEngine()
    eng.load_graph(g)
    want = eng.count_static(cycle)
    got = meet_count(u, v, lab)
    print(f"check on {edges:,} edges: meeting in the middle {got:,}, CPU engine {want:,}")
    if got != want:
        raise SystemExit("the counts differ")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=43_000_000)
    ap.add_argument("--labels", type=int, default=8, help="vertex labels 0..L-1 (>= 6)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count-path", action="store_true",
                    help="count lpath6 exactly with the CPU engine's snapshot, timed")  # fmt: skip
    ap.add_argument("--count-cycle", action="store_true",
                    help="count lcycle6 exactly with the CPU engine's snapshot, timed")  # fmt: skip
    ap.add_argument("--check-edges", type=int, default=0, metavar="N",
                    help="first check the method on a graph of N edges")  # fmt: skip
    args = ap.parse_args()
    if args.labels < K:
        raise SystemExit(f"--labels must be >= {K}")
    if args.check_edges:
        check(args.check_edges, args.labels)
    t0 = time.perf_counter()
    g = chunglu_graph(args.edges, labels=args.labels, seed=args.seed)
    u, v, lab = directed(g)
    deg = np.bincount(u, minlength=len(lab))
    took = time.perf_counter() - t0
    print(f"Chung-Lu graph: {g.num_edges:,} edges, {g.num_vertices:,} vertices, "
          f"{args.labels} labels, top degree {deg.max():,} ({took:.0f} s)")  # fmt: skip
    print(
        "rotation: paths of 1..5 edges from the start label (enumeration's levels); "
        "3-edge paths each way round (meeting in the middle)"
    )
    for i in range(K):
        fwd = [(i + k) % K for k in range(K)]
        bwd = [(i - k) % K for k in range(4)]
        p = path_counts(u, v, lab, fwd)
        back = path_counts(u, v, lab, bwd)
        enum = sum(p[1:])
        meet = p[3] + back[3]
        print(
            f"  start label {i}: levels "
            + " ".join(f"{x:.3g}" for x in p[1:])
            + f" | enumeration {enum:.3g} | meet {meet:.3g} | ratio {enum / meet:.3g}"
        )

    walks = path_counts(u, v, lab, list(range(K)))[K - 1]
    for cycle in [False] * args.count_path + [True] * args.count_cycle:
        count_exactly(g, walks, cycle)


def count_exactly(g: Graph, walks: float, cycle: bool) -> None:
    """lpath6 (checked against ``walks``, the 5-edge paths' float count) or lcycle6, counted
    by the CPU engine's snapshot on every core, timed."""
    from dcsm.engine.snapshot import StaticSnapshot

    edges = [(i, i + 1, None) for i in range(K - 1)] + ([(K - 1, 0, None)] if cycle else [])
    pattern = Pattern.build("lcycle6" if cycle else "lpath6", list(range(K)), edges)
    t0 = time.perf_counter()
    snap = StaticSnapshot.from_graph(g)
    t1 = time.perf_counter()
    count, _ = snap.run_all(pattern, emit=False)
    t2 = time.perf_counter()
    print(f"{pattern.name} counted exactly: {count:,} in {t2 - t1:.2f} s (snapshot built in "
          f"{t1 - t0:.1f} s)")  # fmt: skip
    if not cycle and abs(count - walks) > 1e-9 * walks:
        raise SystemExit(f"the exact count differs from the walks' count {walks:.6g}")


if __name__ == "__main__":
    main()
