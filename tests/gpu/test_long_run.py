"""Memory stays flat while the collector keeps up, over a long churning stream."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from gpu_helpers import TRIANGLE, assert_same, cpu_run, random_graph

from dcsm.gpu.engine import GpuEngine
from dcsm.model import UpdateBatch


def test_pool_usage_stays_flat_under_churn() -> None:
    rng = np.random.default_rng(21)
    g = random_graph(rng, nv=2000, ne=20_000)
    # Each round deletes a random sample of live edges and inserts them back.
    rounds, per = 40, 5000
    pick = rng.integers(0, g.num_edges, (rounds, per))
    ops, us, vs = [], [], []
    for r in range(rounds):
        idx = np.unique(pick[r])
        ops += [np.full(len(idx), -1, np.int8), np.ones(len(idx), np.int8)]
        us += [g.src[idx], g.src[idx]]
        vs += [g.dst[idx], g.dst[idx]]
    stream = UpdateBatch.from_arrays(np.concatenate(ops), np.concatenate(us), np.concatenate(vs))
    eng = GpuEngine(pool_slabs=1 << 16, max_vertices=1 << 14, max_versions=1 << 17, out_cap=1 << 20)
    eng.load_graph(g)
    eng.register(0, TRIANGLE, from_seq=0, count_only=True)
    usage, results = [], []
    step = len(stream) // rounds
    for i in range(0, len(stream), step):
        results.append(eng.apply(stream.slice(i, i + step)))
        lag = eng.stats()["slabs_in_use"]  # right after the batch: garbage not yet collected
        s = eng.wait_collected()
        usage.append((i + step, lag, s["slabs_in_use"], s["versions_in_use"], s["gc_freed"]))
    eng.close()
    assert_same(results, cpu_run(g, stream, [TRIANGLE], True))
    slabs = np.array([u[2] for u in usage])
    # After warm-up, live slabs stay within a band around their mean: no leak.
    tail = slabs[len(slabs) // 4 :]
    assert tail.max() <= 1.5 * tail.min(), slabs.tolist()
    assert usage[-1][4] > 0  # the collector really freed versions
    out = os.environ.get("DCSM_RESULTS")
    if out:
        lines = [
            "updates\tslabs_in_use_at_batch_end\tslabs_in_use_collected\tversions_in_use\tversions_freed"
        ]
        lines += ["\t".join(map(str, u)) for u in usage]
        Path(out, "gc_pool_usage.tsv").write_text("\n".join(lines) + "\n")
