"""What fetching instructions costs one warp: a straight run of ``n`` dependent
multiply-adds (x = x * x + k: one 16-byte instruction each, which ptxas cannot fold), run
twice by one warp, each run timed in clock cycles. The first run fetches the code (from L2,
or further); the second finds what the SM's instruction caches kept of it. The dcsm
kernel's text is ~650 KB, its run_task alone ~210 KB: an updater task's code path may be
fetched afresh each time it runs.

    python3 -P bench/debug/icache_cost.py

Prints one row a run length: cycles an instruction, first and second run.
"""

from __future__ import annotations

import cupy as cp
import numpy as np


def source(n: int) -> str:
    body = "\n".join(
        f'    asm volatile("mad.lo.u32 %0, %0, %0, {k % 97 + 1};" : "+r"(x));' for k in range(n)
    )
    return f"""
extern "C" __global__ void run(unsigned* out, unsigned seed) {{
    unsigned x = seed + threadIdx.x;
    long long c[3];
    for (int r = 0; r < 2; ++r) {{
        c[r] = clock64();
{body}
        __syncwarp();
    }}
    c[2] = clock64();
    if (threadIdx.x == 0) {{
        out[0] = (unsigned)(c[1] - c[0]);
        out[1] = (unsigned)(c[2] - c[1]);
        out[2] = x;
    }}
}}
"""


def main() -> None:
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print("| instructions | code KB | cycles/instr, first run | cycles/instr, second run |")
    print("|---:|---:|---:|---:|")
    for n in (256, 1024, 4096, 16384):
        kernel = cp.RawKernel(source(n), "run")
        out = cp.zeros(3, dtype=cp.uint32)
        kernel((1,), (32,), (out, np.uint32(1)))  # loads the module
        kernel((1,), (32,), (out, np.uint32(2)))
        first, second, _ = out.get().tolist()
        print(f"| {n} | {n * 16 // 1024} | {first / n:.2f} | {second / n:.2f} |")


if __name__ == "__main__":
    main()
