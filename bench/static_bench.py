"""Static matching time: the GPU matcher (gpu/static_match.py) against the CPU engine.

    python3 -P bench/static_bench.py --data DIR --out static_bench.json
    python3 -P bench/static_bench.py --graph G.graph --query Q1 --query Q2 --out rows.json

Without --graph: citeseer with its six queries, oracle-github full.graph with Q_0..Q_10, and
enron unlabeled initial.graph with Q1..Q9, from --data (the shared data folder). Only counts
are timed. GPU: ``StaticMatcher.count`` on a CSR already on the device (its build time is
reported once per graph as ``csr_s``), best of --repeat. CPU: ``CpuEngine.count_static`` (the
numba kernels, compiled beforehand on a small graph), once. Each JSON row is
``{graph, pattern, count, gpu_s, cpu_s, ratio}`` with ratio = cpu_s / gpu_s; the file is
rewritten after every row. A count that differs between the two stops the run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.gpu.static_match import StaticMatcher
from dcsm.graphio import read_csm_query, read_graph
from dcsm.model import Pattern

DEFAULT = [
    ("citeseer/citeseer_unlabeled.graph", "citeseer/queries",
     ["triangle", "cycle4", "diamond", "clique4", "house", "pentagon"]),
    ("oracle-github/full.graph", "oracle-github/queries", [f"Q_{i}" for i in range(11)]),
    ("enron/unlabeled/initial.graph", "enron/unlabeled/queries",
     ["Q1_triangle", "Q2_4cycle", "Q3_tailed_triangle", "Q4_diamond", "Q5_4clique",
      "Q6_5cycle", "Q7_house", "Q8_bowtie", "Q9_5clique"]),
]  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--graph", type=Path, help="one graph file instead of the default set")
    ap.add_argument("--query", type=Path, action="append", default=[], help="with --graph")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cpu", action="store_true", help="GPU only (cpu_s and ratio null)")
    args = ap.parse_args()
    if args.graph:
        work = [(args.graph, args.query)]
    else:
        work = [(args.data / g, [args.data / d / q for q in qs]) for g, d, qs in DEFAULT]

    matcher = StaticMatcher()
    warm = CpuEngine()  # compile the numba kernels outside the timings
    warm.load_graph(read_graph(work[0][0]))
    warm.count_static(Pattern.build("e", [None, None], [(0, 1, None)]))
    rows: list[dict] = []
    for graph_path, queries in work:
        cpu = CpuEngine()
        cpu.load_graph(read_graph(graph_path))
        g = cpu.export_graph()  # vertex_ids in the CPU engine's internal order
        ids = g.vertex_ids
        sorter = np.argsort(ids, kind="stable")
        a = sorter[np.searchsorted(ids, g.src, sorter=sorter)]
        b = sorter[np.searchsorted(ids, g.dst, sorter=sorter)]
        t = time.perf_counter()
        csr = matcher.csr_from_edges(len(ids), np.minimum(a, b), np.maximum(a, b),
                                     g.edge_labels, g.vertex_labels, ids)  # fmt: skip
        csr_s = time.perf_counter() - t
        for qpath in queries:
            pattern = read_csm_query(qpath)
            gpu_s = float("inf")
            for _ in range(max(1, args.repeat)):
                t = time.perf_counter()
                count = matcher.count(csr, pattern)
                gpu_s = min(gpu_s, time.perf_counter() - t)
            cpu_s = None
            if not args.no_cpu:
                t = time.perf_counter()
                want = cpu.count_static(pattern)
                cpu_s = time.perf_counter() - t
                if want != count:
                    print(f"{graph_path} {qpath.name}: GPU {count} != CPU {want}", file=sys.stderr)
                    return 1
            row = {"graph": str(graph_path.relative_to(args.data) if not args.graph
                                else graph_path), "pattern": qpath.name, "count": count,
                   "gpu_s": round(gpu_s, 6), "cpu_s": None if cpu_s is None else round(cpu_s, 6),
                   "ratio": None if cpu_s is None else round(cpu_s / gpu_s, 2),
                   "csr_s": round(csr_s, 6)}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
