// search_steps.cuh -- a step of a four-way search of a sorted run, shared by the persistent
// kernel's per-lane searches (mvg_read.cuh, SEARCH_WAYS) and the static matcher's
// (static_match.cu, SEARCH_WAYS there): three pivots a step, loaded by the caller together,
// so a search of n entries waits for about log4(n) loads instead of log2(n). And the gap of
// a warp's 32 pivots that holds a key (PIVOT_MIN, executor.cuh's warp_pivot_gap).
// Buffers: none; positions only.

// The three pivots splitting [lo, hi) (hi - lo >= 4) into four near-equal parts: lo < m1 <
// m2 < m3 < hi (a search of 27K entries then waits for at most 8 loads, 15 binary).
struct Split4 { int m1, m2, m3; };
__device__ __forceinline__ Split4 split4(int lo, int hi) {
    const int n = hi - lo, m2 = lo + (n >> 1);
    return Split4{lo + (n >> 2), m2, m2 + ((hi - m2) >> 1)};
}

// [lo, hi) narrowed to the part that holds the answer (the first entry not below the key),
// `below` (0-3) of the pivots being below the key: a prefix of them, the run being sorted.
__device__ __forceinline__ void narrow4(const Split4& p, int below, int& lo, int& hi) {
    const int nlo = below == 0 ? lo : below == 1 ? p.m1 + 1 : below == 2 ? p.m2 + 1 : p.m3 + 1;
    hi = below == 0 ? p.m1 : below == 1 ? p.m2 : below == 2 ? p.m3 : hi;
    lo = nlo;
}

// Warp pivots (PIVOT_MIN): lane l of a warp holds the entry at pivot_pos(len, l) of a run of
// len entries, 32 positions spread over it (warp_lower_nbr's first step takes the same).
__device__ __forceinline__ int pivot_pos(int len, int l) { return (int)((long long)len * (l + 1) / 33); }

// The gap of the pivots that holds a key's first entry not below it, [lo, hi], when `below`
// of the 32 pivots are below the key (the run sorted, they are a prefix of them; on the
// device, warp_lanes.cuh's lanes_below counts them).
__device__ __forceinline__ void gap_of_pivots(int below, int len, int& lo, int& hi) {
    lo = below ? pivot_pos(len, below - 1) + 1 : 0;
    hi = below < 32 ? pivot_pos(len, below) : len;
}
