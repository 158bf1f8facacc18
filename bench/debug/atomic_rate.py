"""How fast the device adds into count arrays at random places: the 4-cycle hub phase's
work (gpu/ring_count.cuh wedge_hubs: one atomic add a wedge, into a 16-bit counter of a
hub root's array, the count before it returned), measured on its own.

Each variant adds 1 at ``--adds`` places read from an index array (as wedge_hubs reads a
u's row), into ``--arrays`` count arrays of ``--counters`` 16-bit counters (two a 32-bit
word) taken in turn by consecutive chunks of indices, and reports adds a second:
- ``return``: the count before each add summed, the loop ending where an index is out of
  range (never here), as wedge_hubs walks a row up to the root's rank;
- ``return-unrolled``: the same, four adds a thread in flight before their counts are used;
- ``red``: no count returned (a reduction), as a count taken by a pass over the array
  afterwards would need.
Indices are uniform, or skewed toward the low ranks (``u ** 3``: a few counters take
many adds, as a power-law graph's popular w do).

    python3 -P bench/debug/atomic_rate.py [--adds 268435456] [--counters 2222222] \
        [--arrays 1,8] [--out atomic.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SOURCE = r"""
typedef unsigned long long u64;

__device__ __forceinline__ unsigned add_narrow(unsigned* words, int x) {
    const unsigned shift = (x & 1) * 16;
    return (atomicAdd(&words[x >> 1], 1u << shift) >> shift) & 0xffffu;
}

// Chunk c of `chunk` indices adds into array c % arrays (words apart); RETURN: the
// counts before the adds summed (else none is used, and the adds compile to reductions).
template <bool RETURN>
__device__ __forceinline__ u64 add_chunks(const int* idx, long long n, int chunk, int arrays,
                                          long long words, int limit, unsigned* cnt) {
    u64 s = 0;
    for (long long c = blockIdx.x; c * chunk < n; c += gridDim.x) {
        unsigned* a = cnt + (c % arrays) * words;
        const long long end = min(n, (c + 1) * chunk);
        for (long long i = c * chunk + threadIdx.x; i < end; i += blockDim.x) {
            const int x = idx[i];
            if (x >= limit) break;
            if (RETURN)
                s += add_narrow(a, x);
            else
                atomicAdd(&a[x >> 1], 1u << ((x & 1) * 16));
        }
    }
    return s;
}

extern "C" __global__ void add_return(const int* idx, long long n, int chunk, int arrays,
                                      long long words, int limit, unsigned* cnt, u64* out) {
    atomicAdd(out, add_chunks<true>(idx, n, chunk, arrays, words, limit, cnt));
}

extern "C" __global__ void add_return_unrolled(const int* idx, long long n, int chunk,
                                               int arrays, long long words, int limit,
                                               unsigned* cnt, u64* out) {
    u64 s = 0;
    for (long long c = blockIdx.x; c * chunk < n; c += gridDim.x) {
        unsigned* a = cnt + (c % arrays) * words;
        const long long end = min(n, (c + 1) * chunk);
        long long i = c * chunk + threadIdx.x;
        for (; i + 3 * blockDim.x < end; i += 4 * blockDim.x) {
            const int x0 = idx[i], x1 = idx[i + blockDim.x], x2 = idx[i + 2 * blockDim.x],
                      x3 = idx[i + 3 * blockDim.x];
            if (x3 >= limit) break;
            const unsigned a0 = add_narrow(a, x0), a1 = add_narrow(a, x1),
                           a2 = add_narrow(a, x2), a3 = add_narrow(a, x3);
            s += a0 + a1 + a2 + a3;
        }
        for (; i < end; i += blockDim.x) s += add_narrow(a, idx[i]);
    }
    atomicAdd(out, s);
}

extern "C" __global__ void add_red(const int* idx, long long n, int chunk, int arrays,
                                   long long words, int limit, unsigned* cnt, u64*) {
    add_chunks<false>(idx, n, chunk, arrays, words, limit, cnt);
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--adds", type=int, default=1 << 28)
    ap.add_argument("--counters", type=int, default=2_222_222, help="a 20M-edge graph's ranks")
    ap.add_argument("--arrays", default="1,8")
    ap.add_argument("--chunk", type=int, default=4096, help="indices a block takes at a time")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import cupy as cp

    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
    n, words = args.adds, (args.counters + 1) // 2
    rng = cp.random.default_rng(0)
    u = rng.random(n, dtype=cp.float32)
    spreads = {"uniform": u, "skewed": u**3}
    rows = []
    for spread, f in spreads.items():
        idx = cp.minimum((f * args.counters).astype(cp.int32), args.counters - 1)
        for arrays in (int(a) for a in args.arrays.split(",")):
            cnt = cp.zeros(arrays * words, cp.uint32)
            out = cp.zeros(1, cp.uint64)
            for name in ("add_return", "add_return_unrolled", "add_red"):
                fn = mod.get_function(name)
                argv = (idx, cp.int64(n), cp.int32(args.chunk), cp.int32(arrays),
                        cp.int64(words), cp.int32(args.counters), cnt, out)  # fmt: skip
                best = float("inf")
                for _ in range(3):
                    cnt.fill(0)
                    start, end = cp.cuda.Event(), cp.cuda.Event()
                    start.record()
                    fn((sms * 8,), (256,), argv)
                    end.record()
                    end.synchronize()
                    best = min(best, cp.cuda.get_elapsed_time(start, end) / 1e3)
                row = {"spread": spread, "arrays": arrays, "variant": name,
                       "seconds": round(best, 5), "adds_per_s": round(n / best)}  # fmt: skip
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.out:
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        args.out.write_text(json.dumps({"device": device, "adds": n, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
