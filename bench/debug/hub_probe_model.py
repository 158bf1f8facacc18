"""A CPU model of the GPU executors' membership tests for a 4-cycle insertion, and what a
per-hub bitmap of neighbours would save them (the next step for issue 17's 4-cycle).

    python3 -P bench/debug/hub_probe_model.py [--edges 10000000] [--sample 4000] \
        [--hubs 1024,4096,16384]

The graph and stream are ``bench/scale_up_bench.py``'s (a seeded Chung-Lu graph, gamma 2.3,
edges / 9 vertices; 90 % loaded, the other 10 % inserted in random order). For ``--sample``
updates of the stream, each in both orientations (the update edge as query edge (0, 1) and
as (1, 0)), the model walks what ``count_last_pairs`` (gpu/executor.cuh) does: vertex 2
ranges over N(m1) less m0; vertex 3 over the shorter of N(m2) and N(m0) (``pick_base``),
each candidate tested in the other list by ``has_edge``: a binary search (ceil(log2(len +
1)) dependent loads) and one entry load. With a bitmap of neighbours kept for every vertex
of degree >= H, a test into such a list is one load, plus the search only where the bit is
set (a neighbour). The graph each update sees is modelled by the loaded 90 % (the stream
adds 10 %); every list is sorted and whole (no tails, no lifetimes).

Prints, per H: the share of tests that go into lists with a bitmap and miss there, the
dependent loads of the tests now and with bitmaps (and with the entries the scans read,
which stay), and the bitmaps' memory (one bit a vertex each). And the other design: N(m0)
put into a shared-memory hash table once per update orientation and probed wherever N(m2) is
the shorter list, if N(m0) has at most ``--table-max`` entries (a warp's share of shared
memory; a probe costs no global load; the table's entries are read once), and both
together (the table where it applies, bitmaps elsewhere).
"""

from __future__ import annotations

import argparse
import time

import numba as nb
import numpy as np

from dcsm.loadgen.gen_stream import chunglu_graph


def csr(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, sorted neighbours) of the undirected edges (a, b) over n vertices."""
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    order = np.lexsort((dst, src))
    off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=off[1:])
    return off, dst[order].astype(np.int32)


@nb.njit(inline="always")
def _steps(n):  # type: ignore[no-untyped-def]
    """Dependent loads of a binary search over n entries: ceil(log2(n + 1))."""
    s = 0
    while (1 << s) < n + 1:
        s += 1
    return s


@nb.njit(inline="always")
def _has(nbr, lo, hi, x):  # type: ignore[no-untyped-def]
    while lo < hi:
        mid = (lo + hi) >> 1
        if nbr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(nbr) and nbr[lo] == x


@nb.njit(parallel=True, cache=True)
def walk(off, nbr, ua, ub, hubs, tmax):  # type: ignore[no-untyped-def]
    """Per sampled update (both orientations): [tests, scan entries, matches, test loads
    now, hash: entries read building N(m0)'s table, shared-memory probes, test loads left]
    and per hub bound h: [tests into a bitmap list, of them misses, test loads with
    bitmaps, test loads with the table where N(m2) is shorter and bitmaps elsewhere]."""
    k = len(ua)
    base = np.zeros((k, 7), np.int64)
    per = np.zeros((k, len(hubs), 4), np.int64)
    for t in nb.prange(k):
        for side in range(2):
            m0 = ua[t] if side == 0 else ub[t]
            m1 = ub[t] if side == 0 else ua[t]
            d0 = off[m0 + 1] - off[m0]
            built = False
            for p in range(off[m1], off[m1 + 1]):
                m2 = nbr[p]
                if m2 == m0:
                    continue
                d2 = off[m2 + 1] - off[m2]
                # scan the shorter list, test in the other
                s, pv = (m2, m0) if d2 <= d0 else (m0, m2)
                plo, phi = off[pv], off[pv + 1]
                plen = phi - plo
                cost = _steps(plen) + 1
                # the hash variant: N(m0) in a shared-memory table once an orientation,
                # probed where N(m2) is the shorter list; a search as now otherwise
                table = d2 <= d0 and d0 <= tmax  # N(m0) fits a warp's table
                if table and not built:
                    base[t, 4] += d0
                    built = True
                for q in range(off[s], off[s + 1]):
                    x = nbr[q]
                    base[t, 1] += 1
                    if x == m1 or x == m0 or x == m2:
                        continue
                    base[t, 0] += 1
                    base[t, 3] += cost
                    if table:
                        base[t, 5] += 1
                    else:
                        base[t, 6] += cost
                    hit = _has(nbr, plo, phi, x)
                    if hit:
                        base[t, 2] += 1
                    for h in range(len(hubs)):
                        if plen >= hubs[h]:
                            bm = 1 + cost if hit else 1
                            per[t, h, 0] += 1
                            per[t, h, 1] += 0 if hit else 1
                        else:
                            bm = cost
                        per[t, h, 2] += bm
                        per[t, h, 3] += 0 if table else bm
    return base, per


def stream_sample(
    edges: int, gamma: float, seed: int, sample: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """``bench/scale_up_bench.py``'s graph and stream (a seeded Chung-Lu graph, edges / 9
    vertices; the stream the first 10 % of a seeded permutation of its edges): (offsets and
    sorted neighbours of the loaded 90 %, the ends of ``sample`` stream updates picked with
    seed 7, the stream's length)."""
    g = chunglu_graph(edges, max(3, round(edges / 9)), gamma=gamma, seed=seed)
    ids = np.sort(g.vertex_ids)
    a, b = np.searchsorted(ids, g.src), np.searchsorted(ids, g.dst)
    n = int(round(len(a) * 0.1))
    order = np.random.default_rng(seed + 1).permutation(len(a))
    streamed, kept = order[:n], order[n:]
    off, nbr = csr(len(ids), a[kept], b[kept])
    pick = streamed[np.random.default_rng(7).choice(n, min(sample, n), replace=False)]
    return off, nbr, a[pick], b[pick], n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=10_000_000)
    ap.add_argument("--gamma", type=float, default=2.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=4000, help="stream updates modelled")
    ap.add_argument("--hubs", default="1024,4096,16384", help="degree bounds H for a bitmap")
    ap.add_argument(
        "--table-max",
        type=int,
        default=2048,
        help="the longest N(m0) a warp's shared-memory table holds",
    )
    args = ap.parse_args()
    hubs = np.array([int(h) for h in args.hubs.split(",")], np.int64)
    t0 = time.perf_counter()
    off, nbr, ua, ub, n = stream_sample(args.edges, args.gamma, args.seed, args.sample)
    print(
        f"graph: {args.edges:,} edges, {len(off) - 1:,} vertices, top degree "
        f"{int(np.diff(off).max()):,}; {len(ua):,} of {n:,} stream updates modelled "
        f"({time.perf_counter() - t0:.1f} s to build)"
    )
    t1 = time.perf_counter()
    base, per = walk(off, nbr, ua, ub, hubs, args.table_max)
    tests, scans, matches, now, built, probes, left = (int(x) for x in base.sum(axis=0))
    print(
        f"walked in {time.perf_counter() - t1:.1f} s: {tests / len(ua):,.0f} membership "
        f"tests, {scans / len(ua):,.0f} scanned entries, {matches / len(ua):,.0f} "
        f"matches an update (one plan each way); {now / tests:.1f} dependent loads a test"
    )
    print(
        f"a shared-memory table of N(m0) (at most {args.table_max:,} entries) an orientation, "
        f"probed where N(m2) is shorter: "
        f"{built / len(ua):,.0f} entries read to build it, {probes / tests:.1%} of the tests "
        f"become shared-memory probes, test loads {now / max(left, 1):.2f}x fewer (with the "
        f"build and the scans' entries: {(now + scans) / (left + built + scans):.2f}x)"
    )
    deg = np.diff(off)
    print(
        "  H      lists  bitmaps MB  tests into them  of which miss  test loads  "
        "with the scans' entries  table + bitmaps: test loads, with the build and scans"
    )
    for h, bound in enumerate(hubs):
        into, miss, with_bm, both = (int(x) for x in per[:, h].sum(axis=0))
        lists = int((deg >= bound).sum())
        mb = lists * (len(off) - 1) / 8 / 2**20
        print(
            f"  {bound:<6} {lists:>5} {mb:>10,.0f}  {into / tests:>14.1%}"
            f"  {miss / max(into, 1):>12.1%}"
            f"  {now / with_bm:>9.2f}x  {(now + scans) / (with_bm + scans):>22.2f}x"
            f"  {now / max(both, 1):>25.2f}x  {(now + scans) / (both + built + scans):>5.2f}x"
        )


if __name__ == "__main__":
    main()
