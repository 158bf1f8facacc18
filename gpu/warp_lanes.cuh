// warp_lanes.cuh -- walking every lane's list as one concatenated list, 32 entries a round
// (the executors' count_last_pairs in executor.cuh, the static count's walk_scans in
// static_match.cu), and searching 32 sorted values held one a lane (the executors'
// merge_window). Buffers: none; registers and shuffles only.

// v's inclusive prefix sum over the warp's lanes (every lane calls it).
__device__ __forceinline__ int warp_inclusive_sum(int v, int lane) {
    for (int d = 1; d < 32; d <<= 1) {
        int u = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

// The lane owning entry g of the concatenation: the first lane whose inclusive sum `incl`
// passes g (31 when g is past the total). Every lane calls it, each with its own g.
__device__ __forceinline__ int owning_lane(int incl, int g) {
    int o = 0, hi = 31;
    while (o < hi) {
        int mid = (o + hi) >> 1;
        if (__shfl_sync(0xffffffffu, incl, mid) > g) hi = mid; else o = mid + 1;
    }
    return o;
}

// How many lanes hold a v below c (at or below c when `or_equal`), v being nondecreasing
// over the lanes: a binary search of the lanes' values by shuffles. Every lane calls it,
// each with its own c.
__device__ __forceinline__ int lanes_below(int v, int c, bool or_equal) {
    int p = 0;
    for (int step = 16; step > 0; step >>= 1) {
        const int w = __shfl_sync(0xffffffffu, v, p + step - 1);
        if (w < c || (or_equal && w == c)) p += step;
    }
    const int last = __shfl_sync(0xffffffffu, v, 31);
    return p + (p == 31 && (last < c || (or_equal && last == c)));
}
