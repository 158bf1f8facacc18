"""Run one random-stream case of tests/gpu several times and print where the GPU engine
first differs from the CPU engine (outcome, or per-update count rows), to tell a
deterministic bug from a race.

    python3 -P bench/debug/repeat_random.py SEED [--count-only] [--repeat 5] [--chunk 1000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "gpu"))
from gpu_helpers import (  # noqa: E402
    PATTERNS,
    canonical,
    cpu_run,
    edge_set,
    random_graph,
    random_stream,
)

from dcsm.engine.cpu import CpuEngine  # noqa: E402
from dcsm.gpu.engine import GpuEngine  # noqa: E402

SMALL = dict(pool_slabs=1 << 14, max_vertices=1 << 16, max_versions=1 << 16, out_cap=1 << 20)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("--count-only", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    g = random_graph(rng, nv=int(rng.integers(20, 60)), ne=int(rng.integers(40, 300)))
    stream = random_stream(rng, g, 400)
    want = canonical(cpu_run(g, stream, PATTERNS, args.count_only))
    cpu = CpuEngine()
    cpu.load_graph(g)
    cpu.apply(stream)
    want_edges = edge_set(cpu.export_graph())
    for r in range(args.repeat):
        eng = GpuEngine(**SMALL)
        eng.load_graph(g)
        for q, p in enumerate(PATTERNS):
            eng.register(q, p, from_seq=0, count_only=args.count_only)
        res = [
            eng.apply(stream.slice(i, i + args.chunk)) for i in range(0, len(stream), args.chunk)
        ]
        got_edges = edge_set(eng.export_graph())
        print(f"run {r}: graph equal: {got_edges == want_edges}", eng.stats())
        eng.close()
        got = canonical(res)
        bad_out = np.nonzero(got["outcome"] != want["outcome"])[0]
        key = "counts" if args.count_only else "deltas"
        a, b = got[key], want[key]
        same = a.shape == b.shape and np.array_equal(a, b)
        print(f"run {r}: outcome diffs at {bad_out[:5].tolist()}, {key} equal: {same}")
        if not same:
            sa = {tuple(x) for x in a.tolist()}
            sb = {tuple(x) for x in b.tolist()}
            print("  gpu only:", sorted(sa - sb)[:8])
            print("  cpu only:", sorted(sb - sa)[:8])


if __name__ == "__main__":
    main()
