"""Embeddings-mode (or, with ``--count``, count-mode) search time of the CPU engine on a
published stream.

    python bench/cpu_embeddings.py --data ../shared/data --updates 20000 \
        --queries Q1_triangle,Q2_4cycle,Q4_diamond,Q5_4clique,Q9_5clique,Q3_tailed_triangle

For every query of enron's unlabelled workload (``--dataset``): a fresh ``CpuEngine`` loads
the initial graph, registers the query in embeddings mode (every match row written out),
and applies the first ``--updates`` updates of the stream in one call; the fastest of
``--repeat`` runs counts. ``digest`` (the sum of the bytes of the sorted rows) lets two
versions of the engine be compared row for row without storing the rows; with
``--count`` the query is registered in count mode and ``rows`` is the sum of the counts
(``digest`` 0). Prints one JSON object per query and a table at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph


def digest(rows: np.ndarray) -> int:
    if not len(rows):
        return 0
    rows = np.ascontiguousarray(rows)
    keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    return int(np.sort(keys).view(np.uint8).sum(dtype=np.int64))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA",
                                                                    "../shared/data")))  # fmt: skip
    ap.add_argument("--dataset", default="enron/unlabeled")
    ap.add_argument("--queries", default="Q1_triangle,Q2_4cycle,Q5_4clique,Q9_5clique")
    ap.add_argument("--updates", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--count", action="store_true", help="count mode instead of embeddings")
    args = ap.parse_args()
    root = args.data / args.dataset
    graph = read_graph(root / "initial.graph")
    stream = read_csm_stream(root / "stream.updates")
    stream = stream.slice(0, min(args.updates, len(stream)))
    rows_out = []
    for name in args.queries.split(","):
        pattern = read_csm_query(root / "queries" / name)
        best, res = float("inf"), None
        for _ in range(max(1, args.repeat)):
            eng = CpuEngine()
            eng.load_graph(graph)
            eng.register(0, pattern, from_seq=0, count_only=args.count)
            t = time.perf_counter()
            res = eng.apply(stream)
            best = min(best, time.perf_counter() - t)
            eng.close()
        rows = int(res.counts.count.sum()) if args.count else len(res.deltas.match)
        row = {"query": name, "updates": len(stream), "rows": rows, "seconds": round(best, 4),
               "digest": 0 if args.count else digest(res.deltas.match)}  # fmt: skip
        rows_out.append(row)
        print(json.dumps(row), flush=True)
    print("\n| query | rows | seconds | digest |\n| --- | ---: | ---: | ---: |")
    for r in rows_out:
        print(f"| {r['query']} | {r['rows']:,} | {r['seconds']:.3f} | {r['digest']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
