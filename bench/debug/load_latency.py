"""One lane's dependent loads through L2 (``__ldcg``, as the updater's tasks load), by how far
apart they land: a pointer chase over ``lines`` cache lines of 128 bytes, picked at random
from a buffer of ``span`` bytes, in a random cycle. With the same lines over a larger span
every line stays in L2 (the lines take the same bytes), so what the span adds is address
translation: more 2 MB pages than the TLBs hold. Lines past L2's size add DRAM.

    python3 -P bench/debug/load_latency.py [--steps 20000] [--beside-engine DATA]

Prints one row a (span, lines): ns and clock cycles a load, from the second of two walks
(the first warms L2 and the TLBs); a walk covers every line at least once. With
``--beside-engine``, the same rows again while a GpuEngine's persistent kernel runs, idle,
on oracle-github's graph under DATA (the chase's one block fits beside its blocks, on its
own non-blocking stream): what the resident kernel's polling costs a load.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cupy as cp
import numpy as np

_SOURCE = r"""
extern "C" __global__ void chase(const unsigned* next, unsigned start, int steps,
                                 unsigned long long* out) {
    if (threadIdx.x != 0) return;
    unsigned p = start;
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    const long long c0 = clock64();
    for (int i = 0; i < steps; ++i) p = __ldcg(next + p);
    const long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = t1 - t0;
    out[1] = (unsigned long long)(c1 - c0);
    out[2] = p;
}
"""

LINE_WORDS = 32  # 128 bytes of uint32


def walk(
    kernel: cp.RawKernel,
    span: int,
    lines: int,
    steps: int,
    rng: np.random.Generator,
    stream: cp.cuda.Stream,
) -> tuple[float, float]:
    """ns and cycles a load of a chase over ``lines`` random lines of a ``span``-byte buffer."""
    slots = span // (4 * LINE_WORDS)
    picked = rng.choice(slots, size=min(lines, slots), replace=False).astype(np.int64)
    order = rng.permutation(picked) * LINE_WORDS
    buf = cp.zeros(span // 4, dtype=cp.uint32)
    nxt = np.roll(order, -1)
    buf[cp.asarray(order)] = cp.asarray(nxt.astype(np.uint32))
    out = cp.zeros(3, dtype=cp.uint64)
    args = (buf, np.uint32(order[0]), np.int32(steps), out)
    with stream:
        kernel((1,), (32,), args)  # warms L2 and the TLBs
        kernel((1,), (32,), args)
    stream.synchronize()
    ns, cycles, _ = out.get().tolist()
    del buf  # back to CuPy's pool, never freed: a cudaFree would wait for a running engine
    return ns / steps, cycles / steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000, help="loads a walk, at least the lines")
    ap.add_argument("--beside-engine", type=Path, default=None, metavar="DATA")
    args = ap.parse_args()
    kernel = cp.RawKernel(_SOURCE, "chase")
    kernel.compile()  # loaded before any persistent kernel runs (gpu-facts rule 2)
    rng = np.random.default_rng(1)
    stream = cp.cuda.Stream(non_blocking=True)
    mb = 1 << 20
    # (span, lines): 8 MB of lines over ever more pages; then 128 MB of lines (past L2); then
    # 512 KB of lines, over 32 pages and over one.
    rows = [(8 * mb, 1 << 16), (64 * mb, 1 << 16), (256 * mb, 1 << 16), (1024 * mb, 1 << 16),
            (4096 * mb, 1 << 16), (128 * mb, 1 << 20), (1024 * mb, 1 << 20), (4096 * mb, 1 << 20),
            (64 * mb, 1 << 12), (2 * mb, 1 << 12)]  # fmt: skip
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; {args.steps} loads a walk")
    table(kernel, rows, args.steps, rng, stream, "alone")
    if args.beside_engine is None:
        return
    from dcsm.gpu.engine import GpuEngine
    from dcsm.graphio import read_graph
    from dcsm.model import UpdateBatch

    og = args.beside_engine / "oracle-github"
    eng = GpuEngine()
    eng.load_graph(read_graph(og / "full.graph"))
    one = np.ones(1, np.int8)
    eng.apply(UpdateBatch.from_arrays(one, np.zeros(1, np.int64), np.ones(1, np.int64), one))
    table(kernel, rows, args.steps, rng, stream, "beside the engine's idle persistent kernel")
    eng.close()


def table(
    kernel: cp.RawKernel,
    rows: list[tuple[int, int]],
    steps: int,
    rng: np.random.Generator,
    stream: cp.cuda.Stream,
    where: str,
) -> None:
    mb = 1 << 20
    print(f"\n{where}\n")
    print("| span MB | lines | line bytes MB | ns a load | cycles a load |")
    print("|---:|---:|---:|---:|---:|")
    for span, lines in rows:
        ns, cycles = walk(kernel, span, lines, max(steps, lines), rng, stream)
        print(f"| {span // mb} | {lines} | {lines * 128 / mb:g} | {ns:.0f} | {cycles:.0f} |")


if __name__ == "__main__":
    main()
