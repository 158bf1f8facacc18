"""Debug aid: find the first update where the GPU engine's outcome or graph differs from the
CPU engine's, applying one update per call. Usage: python3 -P bench/debug/first_divergence.py"""

import sys

import numpy as np

sys.path.insert(0, "tests/gpu")
from gpu_helpers import PATTERNS, edge_set, random_graph, random_stream  # noqa: E402

from dcsm.engine.cpu import CpuEngine  # noqa: E402
from dcsm.gpu.engine import GpuEngine  # noqa: E402

for nu, bm, step in [(1, 1, 50), (4, 1, 50), (4, 1, 1), (2, 1, 50), (4, 64, 400), (1, 64, 400)]:
    rng = np.random.default_rng(0)
    g = random_graph(rng, nv=int(rng.integers(20, 60)), ne=int(rng.integers(40, 300)))
    s = random_stream(rng, g, 400)
    cpu, gpu = (
        CpuEngine(),
        GpuEngine(
            n_updaters=nu,
            batch_size=bm,
            batch_cap=bm,
            pool_slabs=1 << 14,
            max_vertices=1 << 16,
            max_versions=1 << 16,
            out_cap=1 << 20,
        ),
    )
    for e in (cpu, gpu):
        e.load_graph(g)
        for q, p in enumerate(PATTERNS):
            e.register(q, p, from_seq=0, count_only=True)
    bad = None
    for i in range(0, 400, step):
        a, b = cpu.apply(s.slice(i, i + step)), gpu.apply(s.slice(i, i + step))
        if not np.array_equal(a.outcome, b.outcome):
            j = int(np.nonzero(a.outcome != b.outcome)[0][0])
            bad = (i + j, int(a.outcome[j]), int(b.outcome[j]))
            break
        if step == 1:
            gpu.stop()
            ec, eg = edge_set(cpu.export_graph()), edge_set(gpu.export_graph())
            if ec != eg:
                bad = (i, "graph", sorted(ec - eg)[:5], sorted(eg - ec)[:5])
                break
    gpu.close()
    print(f"n_updaters={nu} batch_size={bm} step={step}: first divergence {bad}", flush=True)
    if bad and step == 1:
        k = bad[0]
        print(
            "  update",
            int(s.op[k]),
            int(s.u[k]),
            int(s.v[k]),
            "earlier same pair:",
            [
                (j, int(s.op[j]))
                for j in range(k)
                if {int(s.u[j]), int(s.v[j])} == {int(s.u[k]), int(s.v[k])}
            ],
        )
