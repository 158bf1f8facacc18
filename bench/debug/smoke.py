"""A quick end-to-end check of the GPU engine before a long device run: load a small random
graph, register a triangle, apply a few hundred updates both ways (plain and paced), and
compare every count with the CPU engine. Exits non-zero on any difference.

    python3 -P bench/debug/smoke.py [--cpu]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.model import Graph, Pattern, UpdateBatch


def main() -> None:
    rng = np.random.default_rng(1)
    n, m = 60, 400
    pairs = np.unique(np.sort(rng.integers(0, n, (m, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]].astype(np.int64)
    graph = Graph(np.arange(n, dtype=np.int64), np.zeros(n, np.int32), pairs[:, 0], pairs[:, 1],
                  np.zeros(len(pairs), np.int32))  # fmt: skip
    tri = Pattern.build("triangle", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
    k = 300
    op = np.where(rng.random(k) < 0.7, 1, -1)
    su, sv = rng.integers(0, n, k), rng.integers(0, n, k)
    keep = su != sv
    op, su, sv = op[keep], su[keep], sv[keep]
    results = []
    on_gpu = "--cpu" not in sys.argv  # --cpu: check the script itself where there is no GPU
    # The CPU engine, then the GPU engine as configured by default and with every batch of
    # at most 32 updates on the short path (self-checks compiled in).
    variants = [None, {}, {"small_path": 2, "check": True}] if on_gpu else [None, None]
    for options in variants:
        second = options is not None
        if second:
            from dcsm.gpu.engine import GpuEngine

            eng = GpuEngine(**options)
        else:
            eng = CpuEngine()
        eng.load_graph(graph)
        eng.register(0, tri, from_seq=0, count_only=True)
        first = UpdateBatch.from_arrays(op, su, sv)
        r1 = eng.apply(first)
        ts = time.time() + 0.01 + np.arange(len(op)) * 1e-4
        back = UpdateBatch.from_arrays(-op[::-1], su[::-1], sv[::-1], ts=ts, first_seq=len(op))
        r2 = eng.apply_paced(back) if second else eng.apply(back)
        results.append([(r.counts.seq.tolist(), r.counts.count.tolist()) for r in (r1, r2)])
        if second:
            print("timeline keys", sorted(eng.last_timeline), "profile", eng.updater_profile())
        eng.close()
    if any(r != results[0] for r in results[1:]):
        raise SystemExit("smoke: GPU counts differ from the CPU engine's")
    print("smoke: ok,", sum(len(c) for c, _ in results[0]), "count rows equal")


if __name__ == "__main__":
    main()
