"""One labelled cycle written from each of its vertices, both ways round: how long the CPU
engine's count takes for each writing (``dcsm/engine/cycle_count.py``). Before
``cheapest_walk`` the cut fell at pattern vertex 0 and vertex k // 2, so the same ring took
the time of whichever cut its writing named; with it, every writing takes the cheapest.
``--backend gpu`` counts with the device's label counter (``StaticMatcher.count`` on a CSR
built once on the device), which prices the cuts with its own tree kernels.

    python3 -P bench/debug/cycle_cut_bench.py --edges 10000000 --labels 8 \
        [--cut-at-vertex-0] [--backend gpu] --out rows.json

``--cut-at-vertex-0`` replaces ``cheapest_walk`` by ``cycle_walk`` (the code before it).
Since 2026-11-28 the host counts each match from its highest-ranked vertex, walking from
every start, and prices no cut: the flag only changes the device's count.

The graph is ``dcsm gen-graph --model chung-lu --labels L``'s (seeded); the cycle's vertex
labels are 0..k-1 in order (``--k``). Each writing is counted on the same snapshot with all
the process's cores (``StaticSnapshot.run_all``), its own counting structures built inside
the timing; every count must equal the first.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from dcsm.engine import cycle_count
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Graph, Pattern


def written(k: int, shift: int, flip: bool) -> Pattern:
    """The cycle of labels 0..k-1 with label j on vertex (shift +- j) mod k."""
    at = [((shift - j) if flip else (shift + j)) % k for j in range(k)]
    labels = [0] * k
    for j in range(k):
        labels[at[j]] = j
    edges = [(at[j], at[(j + 1) % k], None) for j in range(k)]
    return Pattern.build(f"lcycle{k}-{shift}{'r' if flip else ''}", labels, edges)


def cpu_counter(graph: Graph) -> Callable[[Pattern], int]:
    """Counts on one snapshot with all the process's cores."""
    snap = StaticSnapshot.from_graph(graph)
    return lambda p: snap.run_all(p, emit=False)[0]


def gpu_counter(graph: Graph) -> Callable[[Pattern], int]:
    """Counts with the device's label counter on a CSR built once."""
    from dcsm.gpu.static_match import StaticMatcher

    matcher = StaticMatcher()
    csr = matcher.csr_from_graph(graph)
    return lambda p: matcher.count(csr, p)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=6, help="cycle length (<= labels)")
    ap.add_argument("--cut-at-vertex-0", action="store_true",
                    help="the cut at pattern vertex 0, as before cheapest_walk")  # fmt: skip
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cut_at_vertex_0:
        cycle_count.cheapest_walk = lambda pattern, _paths: cycle_count.cycle_walk(pattern)
    t = time.perf_counter()
    graph = chunglu_graph(args.edges, labels=args.labels, seed=args.seed)
    count = gpu_counter(graph) if args.backend == "gpu" else cpu_counter(graph)
    print(f"{args.backend} structures for {args.edges:,} edges in "
          f"{time.perf_counter() - t:.1f} s", flush=True)  # fmt: skip
    rows: list[dict] = []
    for shift in range(args.k):
        for flip in (False, True):
            p = written(args.k, shift, flip)
            t = time.perf_counter()
            n = count(p)
            row = {"pattern": p.name, "vertex0_label": int(p.vlabels[0]), "reversed": flip,
                   "count": n, "seconds": round(time.perf_counter() - t, 3)}  # fmt: skip
            if rows and n != rows[0]["count"]:
                print(f"{p.name}: {n} != {rows[0]['count']}", file=sys.stderr)
                return 1
            rows.append(row)
            print(json.dumps(row), flush=True)
            out = {"edges": args.edges, "backend": args.backend, "rows": rows}
            args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
