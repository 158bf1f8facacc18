// warp_lanes.cuh -- walking every lane's list as one concatenated list, 32 entries a round
// (the executors' count_last_pairs in executor.cuh, the static count's walk_scans in
// static_match.cu). Buffers: none; registers and shuffles only.

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
