"""Self-sized pools under a growing stream, step by step: the growth test of tests/gpu
(test_self_sized_pools_grow_with_the_stream) with every growth logged and the pools' state
printed after each apply and at a failure.

    python3 -P bench/debug/pool_growth.py [--piece 256] [--chunk 1000] [--batch-cap 64]
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "gpu"))
from gpu_helpers import TRIANGLE, growing_workload  # noqa: E402

from dcsm.gpu import engine as gpu_engine  # noqa: E402
from dcsm.gpu import pools  # noqa: E402

STATE = ("ver_bump", "ver_free_head", "ver_free_tail", "gcq_head", "gcq_tail",
         "versions_in_use", "slab_bump", "slabs_in_use", "next_tau", "completed",
         "gc_ptr")  # fmt: skip


def show(eng: gpu_engine.GpuEngine, when: str) -> None:
    st = eng._get_state()[0]
    fields = " ".join(f"{k}={int(st[k])}" for k in STATE)
    print(f"{when}: max_versions={eng._maxver} pool_slabs={eng._nslabs} {fields}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--piece", type=int, default=256)
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--batch-cap", type=int, default=64)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    pools.MIN_SLABS = pools.MIN_VERSIONS = 1024
    gpu_engine._PIECE = gpu_engine._PIECE_MAX = args.piece
    g, stream = growing_workload()
    n = len(stream)
    eng = gpu_engine.GpuEngine(batch_cap=args.batch_cap, max_vertices=1 << 12,
                               out_cap=1 << 20, check=True)  # fmt: skip
    eng.load_graph(g)
    eng.register(0, TRIANGLE, from_seq=0)
    show(eng, "loaded")
    for lo in range(0, n, args.chunk):
        try:
            eng.apply(stream.slice(lo, lo + args.chunk))
        except Exception as exc:  # noqa: BLE001 - a debug script reports and stops
            print(f"apply at {lo}: {exc}", flush=True)
            show(eng, "failed")
            return 1
        print(f"applied {lo + args.chunk}: {eng.wait_collected()}", flush=True)
    eng.close()
    show(eng, "closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
