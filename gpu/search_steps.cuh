// search_steps.cuh -- a step of a four-way search of a sorted run, shared by the persistent
// kernel's per-lane searches (mvg_read.cuh, SEARCH_WAYS) and the static matcher's
// (static_match.cu, SEARCH_WAYS there): three pivots a step, loaded by the caller together,
// so a search of n entries waits for about log4(n) loads instead of log2(n).
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
