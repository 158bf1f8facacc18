"""Repeat the pool-backpressure case (a slab pool far smaller than the stream allocates over
time, so slabs and versions are recycled at once) under kernel variants, and print for each
run whether outcomes, counts and the final graph equal the CPU engine's, plus any self-check
failure. Variants are extra -D options (see KernelConfig.extra), e.g.

    python3 -P bench/debug/race_hunt.py --repeat 8 --variant "" --variant "-DHELP_MASK=0u" \
        --variant "-DDONATE_EVERY=1000000000" --check --budget 400
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "gpu"))
from gpu_helpers import (  # noqa: E402
    TRIANGLE,
    canonical,
    cpu_run,
    edge_set,
    random_graph,
    random_stream,
)

from dcsm.engine.cpu import CpuEngine  # noqa: E402
from dcsm.errors import EngineError  # noqa: E402
from dcsm.gpu.engine import GpuEngine  # noqa: E402


def one_run(g, stream, want, want_edges, check: bool, pool: int, batch_cap: int) -> str:  # type: ignore[no-untyped-def]
    eng = GpuEngine(pool_slabs=pool, max_versions=4096, max_vertices=1 << 12, out_cap=1 << 16,
                    check=check, batch_cap=batch_cap)  # fmt: skip
    try:
        eng.load_graph(g)
        eng.register(0, TRIANGLE, from_seq=0, count_only=True)
        res = [eng.apply(stream)]
        got_edges = edge_set(eng.export_graph())
    except EngineError as e:
        return f"ERROR {e}"
    finally:
        eng.close()
    got = canonical(res)
    bad = np.nonzero(got["outcome"] != want["outcome"])[0]
    same_counts = got["counts"].shape == want["counts"].shape and np.array_equal(
        got["counts"], want["counts"]
    )
    if not len(bad) and same_counts and got_edges == want_edges:
        return "ok"
    return (f"WRONG outcomes at {bad[:6].tolist()}, counts equal {same_counts}, graph equal "
            f"{got_edges == want_edges} (missing {sorted(want_edges - got_edges)[:3]}, extra "
            f"{sorted(got_edges - want_edges)[:3]})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--updates", type=int, default=20_000)
    ap.add_argument("--pool", type=int, default=2048)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--variant", action="append", default=None)
    ap.add_argument("--check", action="store_true", help="also run each variant with CHECK=1")
    ap.add_argument("--only-check", action="store_true", help="run each variant with CHECK=1 only")
    ap.add_argument("--budget", type=float, default=1e9, help="stop after this many seconds")
    ap.add_argument("--batch-cap", type=int, default=16384, help="the engines' batch_cap")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    g = random_graph(rng, nv=200, ne=800)
    stream = random_stream(rng, g, args.updates)
    want = canonical(cpu_run(g, stream, [TRIANGLE], True))
    cpu = CpuEngine()
    cpu.load_graph(g)
    cpu.apply(stream)
    want_edges = edge_set(cpu.export_graph())
    modes = (True,) if args.only_check else (False, True) if args.check else (False,)
    runs = [(v, c) for v in (args.variant or [""]) for c in modes]
    tally = {r: [0, 0] for r in runs}
    t0 = time.monotonic()
    for i in range(args.repeat):
        for variant, check in runs:
            if time.monotonic() - t0 > args.budget:
                break
            os.environ["DCSM_KERNEL_DEFINES"] = variant
            t = time.monotonic()
            verdict = one_run(g, stream, want, want_edges, check, args.pool, args.batch_cap)
            tally[(variant, check)][0] += 1
            tally[(variant, check)][1] += verdict != "ok"
            print(f"run {i} [{variant or 'as is'}{' CHECK' if check else ''}] "
                  f"{time.monotonic() - t:.1f}s: {verdict}", flush=True)  # fmt: skip
    for (variant, check), (n, bad) in tally.items():
        print(f"{variant or 'as is'}{' CHECK' if check else ''}: {bad} of {n} runs wrong")


if __name__ == "__main__":
    main()
