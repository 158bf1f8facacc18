"""A CPU model of the 4-cycle's executor work per update in each orientation: the stream's
own, the flipped one the engines now take (``flip_ends`` in gpu/mvg_read.cuh, ``_flip_ends``
in dcsm/engine/cpu_kernels.py: level 2 walks the lower-degree end's neighbours), and the
cheaper of the two; then, in the flipped orientation, how many membership tests go into
long lists and miss there (what per-hub bitmaps, docs/hub-probes.md design B, would answer
with one load), and how many of the tests' loads (a binary search each) fall on pairs of
long lists of like length, which a merge of both lists would read in fewer entries
(docs/hub-probes.md, "Merging hub pairs").

    python3 -P bench/debug/orientation_model.py [--edges 43000000] [--sample 3000] \
        [--hubs 256,1024,4096]

Graph and stream as ``bench/scale_up_bench.py`` makes them (a seeded Chung-Lu graph, gamma
2.3, edges / 9 vertices; 90 % loaded, the other 10 % inserted in random order); the graph
each update sees is modelled by the loaded 90 %. Work, as in ``count_last_pairs``: vertex 2
ranges over N(m1) less m0 (the level-2 entries), and vertex 3 scans the shorter of N(m2)
and N(m0) and tests each entry in the other list (the level-3 entries).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba as nb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hub_probe_model import _has, _steps, stream_sample  # noqa: E402

PAIR_MIN = 128  # both lists at least this long ...
PAIR_RATIO = 8  # ... and the longer at most this many times the shorter


@nb.njit(parallel=True, cache=True)
def walk(off, nbr, ua, ub, hubs):  # type: ignore[no-untyped-def]
    """Per sampled update: [work with m1 = ub, work with m1 = ua, flipped: tests, hits,
    search loads (a binary search of the longer list, plus the entry, per entry of the
    shorter), of them on like pairs (both >= PAIR_MIN, within PAIR_RATIO), entries a merge of
    those pairs reads] and per hub bound h: [flipped tests into lists >= h, of them misses].
    Work: level-2 plus level-3 entries."""
    k = len(ua)
    base = np.zeros((k, 7), np.int64)
    per = np.zeros((k, len(hubs), 2), np.int64)
    for t in nb.prange(k):
        da, db = off[ua[t] + 1] - off[ua[t]], off[ub[t] + 1] - off[ub[t]]
        for side in range(2):
            m0, m1 = (ua[t], ub[t]) if side == 0 else (ub[t], ua[t])
            flipped = (db <= da) == (side == 0)  # m1 is the lower-degree end
            d0 = off[m0 + 1] - off[m0]
            work = off[m1 + 1] - off[m1]
            for p in range(off[m1], off[m1 + 1]):
                m2 = nbr[p]
                if m2 == m0:
                    continue
                d2 = off[m2 + 1] - off[m2]
                work += min(d2, d0)
                if not flipped:
                    continue
                lo, hi = min(d2, d0), max(d2, d0)
                loads = lo * (_steps(hi) + 1)
                base[t, 4] += loads
                if lo >= PAIR_MIN and hi <= PAIR_RATIO * lo:
                    base[t, 5] += loads
                    base[t, 6] += lo + hi
                s, pv = (m2, m0) if d2 <= d0 else (m0, m2)
                plo, phi = off[pv], off[pv + 1]
                for q in range(off[s], off[s + 1]):
                    x = nbr[q]
                    if x == m1 or x == m0 or x == m2:
                        continue
                    hit = _has(nbr, plo, phi, x)
                    base[t, 2] += 1
                    base[t, 3] += hit
                    for h in range(len(hubs)):
                        if phi - plo >= hubs[h]:
                            per[t, h, 0] += 1
                            per[t, h, 1] += not hit
            base[t, side] = work
    return base, per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=43_000_000)
    ap.add_argument("--gamma", type=float, default=2.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=int, default=3000, help="stream updates modelled")
    ap.add_argument("--hubs", default="256,1024,4096", help="list lengths H for a bitmap")
    args = ap.parse_args()
    hubs = np.array([int(h) for h in args.hubs.split(",")], np.int64)
    t0 = time.perf_counter()
    off, nbr, ua, ub, _ = stream_sample(args.edges, args.gamma, args.seed, args.sample)
    base, per = walk(off, nbr, ua, ub, hubs)
    k = len(ua)
    given, other = base[:, 0].sum() / k, base[:, 1].sum() / k
    best = base[:, :2].min(axis=1).sum() / k
    flipped = np.where(np.diff(off)[ub] <= np.diff(off)[ua], base[:, 0], base[:, 1])
    print(f"{args.edges:,} edges, {k:,} updates modelled ({time.perf_counter() - t0:.1f} s)")
    print(f"work an update: as the stream gives it {given:,.0f}, the other way {other:,.0f}, "
          f"flipped {flipped.sum() / k:,.0f}, the cheaper of the two {best:,.0f}; "
          f"as given / flipped {given * k / flipped.sum():.2f}x")  # fmt: skip
    tests, hits = base[:, 2].sum(), base[:, 3].sum()
    print(f"flipped: {tests / k:,.0f} membership tests an update, {hits / tests:.1%} hits")
    for h in range(len(hubs)):
        into, miss = per[:, h, 0].sum(), per[:, h, 1].sum()
        print(f"  lists >= {hubs[h]:,}: {into / tests:.1%} of the tests, "
              f"{miss / max(1, into):.1%} of those miss")  # fmt: skip
    loads, like, merged = (int(x) for x in base[:, 4:].sum(axis=0))
    fewer = loads / max(1, loads - like + merged)
    print(
        f"flipped: {loads / k:,.0f} search loads an update, {like / max(1, loads):.1%} on "
        f"pairs of lists >= {PAIR_MIN} within {PAIR_RATIO}x; merging those reads "
        f"{merged / max(1, like):.2f} entries a load, {fewer:.2f}x fewer reads in all"
    )


if __name__ == "__main__":
    main()
