"""Can a static count run while the persistent kernel runs? (issue 18: backfill beside the
stream on the GPU.) gpu/static_match.py records that on 2026-11-24 a no-op kernel and
static_count on another stream waited until the persistent kernel stopped. Two implicit
synchronisations could explain it without any lack of SMs: ``cudaMalloc`` (CuPy's pool
calls it when no cached block fits) and lazy module loading. This script removes both:
the persistent kernel gets fewer blocks than fit (``--spare`` block slots per SM left free),
the CSR snapshot is built and one count runs before the kernel starts (modules loaded, pool
blocks cached for the same sizes), then the same count runs while the kernel is running.
A watchdog thread stops the engine after ``--limit`` seconds if the count is blocked.

    python3 -P bench/debug/static_beside_kernel.py [--edges 200000] [--spare 1] [--limit 10]

Prints whether the count finished beside the kernel, its time, and that its count equals
the one taken before; first, each kernel's registers and shared memory per block, and
whether one static block fits in what the persistent kernel's blocks leave of an SM (a block
that fits nowhere waits for the persistent kernel to exit, whatever the stream).
"""

from __future__ import annotations

import argparse
import faulthandler
import threading
import time

import numpy as np

from dcsm.gpu.engine import THREADS, GpuEngine
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern, UpdateBatch


def _resources(fn, threads: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Registers and static shared bytes one block of fn takes."""
    return int(fn.num_regs) * threads, int(fn.shared_size_bytes)


def fits(eng: GpuEngine, per_sm: int) -> None:
    """Print each kernel's per-block needs and whether a static block fits beside per_sm
    persistent blocks on one SM."""
    import cupy as cp

    from dcsm.gpu.static_match import THREADS as STATIC_THREADS

    attrs = cp.cuda.Device().attributes
    regs_sm = int(attrs["MaxRegistersPerMultiprocessor"])
    smem_sm = int(attrs["MaxSharedMemoryPerMultiprocessor"])
    threads_sm = int(attrs["MaxThreadsPerMultiProcessor"])
    r, m = _resources(eng._kernel, THREADS)
    print(f"SM: {regs_sm} registers, {smem_sm} B shared, {threads_sm} threads; "
          f"persistent block: {r} registers ({eng._kernel.num_regs}/thread), {m} B shared, "
          f"{per_sm} per SM")  # fmt: skip
    left = (regs_sm - per_sm * r, smem_sm - per_sm * m, threads_sm - per_sm * THREADS)
    for name, fn in eng._static._kernels.items():
        sr, sm = _resources(fn, STATIC_THREADS)
        ok = sr <= left[0] and sm <= left[1] and STATIC_THREADS <= left[2]
        print(f"  {name}: {sr} registers ({fn.num_regs}/thread), {sm} B shared, "
              f"{fn.local_size_bytes} B local/thread; fits beside: {ok}")  # fmt: skip


def count_in_steps(m, csr, p, t0: float) -> None:  # type: ignore[no-untyped-def]
    """StaticMatcher.count's steps one by one, the stream synchronised and the time printed
    after each: the step that waits for the persistent kernel is the one printed late."""
    import numpy as np

    from dcsm.gpu.static_match import device_plan

    def step(name: str) -> None:
        m.stream.synchronize()
        print(f"    {name}: {1e3 * (time.perf_counter() - t0):.1f} ms", flush=True)

    dp = device_plan(p, count=True)
    n = m.start_edges(csr)
    step("entries")
    with m.stream:
        x = m._cp.arange(4)
        step("arange")
        d_plan = m._upload(dp, csr, count=True)
        step("upload")
        ctl = m._ctl()
        step("ctl")
        units = m._cp.empty(n, np.uint64)
        step("empty")
        m._launch("static_units", csr, d_plan, 0, n, ctl, per=units)
        step("static_units")
        m._prefix_sum(units)
        step("prefix sum")
        m._launch("static_count", csr, d_plan, 0, n, ctl, per=units)
        step("static_count")
    print(f"    total {int(ctl.get(stream=m.stream)[1]) * dp.weight:,} ({int(x.sum())})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", type=int, default=200_000)
    ap.add_argument("--spare", type=int, default=1, help="block slots per SM left free")
    ap.add_argument("--limit", type=float, default=10.0)
    args = ap.parse_args()
    import cupy as cp

    g = chunglu_graph(args.edges, seed=3)
    probe = GpuEngine()  # only to learn the co-resident grid
    full, sms = probe._blocks, cp.cuda.Device().attributes["MultiProcessorCount"]
    probe.close()
    blocks = max(sms, full - args.spare * sms)
    eng = GpuEngine(blocks=blocks)
    fits(eng, -(-blocks // sms))
    eng.load_graph(g)
    tri = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
    c4 = Pattern.build("c4", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None)])
    csr = eng._snapshot()  # the kernel is not running: built, and modules loaded, now
    before = {p.name: eng._static.count(csr, p) for p in (tri, c4)}
    print("steps of a count before the kernel starts:")
    count_in_steps(eng._static, csr, tri, time.perf_counter())
    eng.register(1, tri, from_seq=0, count_only=True)
    rng = np.random.default_rng(0)
    u, v = rng.integers(0, 1000, 2000), rng.integers(1000, 2000, 2000)
    eng.apply(UpdateBatch.from_arrays(np.ones(2000), u, v))  # launches the kernel; it stays
    assert eng._running
    stopped = threading.Event()

    def watchdog() -> None:
        if not stopped.wait(args.limit):
            print(f"blocked: no result after {args.limit} s; stopping the persistent kernel")
            eng.stop()

    threading.Thread(target=watchdog, daemon=True).start()
    print(f"persistent kernel on {blocks} blocks of {full} ({sms} SMs); kernel running")
    faulthandler.dump_traceback_later(args.limit / 2)
    print("steps of a count beside the kernel:")
    count_in_steps(eng._static, csr, tri, time.perf_counter())
    faulthandler.cancel_dump_traceback_later()
    for p in (tri, c4):
        t0 = time.perf_counter()
        got = eng._static.count(csr, p)
        dt = time.perf_counter() - t0
        same = got == before[p.name]
        print(f"{p.name}: {got:,} in {dt * 1e3:.1f} ms beside the kernel "
              f"(still running: {eng._running}); equal to before: {same}")  # fmt: skip
    stopped.set()
    eng.close()


if __name__ == "__main__":
    main()
