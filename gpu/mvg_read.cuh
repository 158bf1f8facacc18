// mvg_read.cuh -- reading the multi-version graph as update tau sees it (Property 1),
// and the plan blobs. Buffers read: head, vers, entries (through L2), plans; written:
// none.

// Entry offsets and indices are 64-bit (slab * 32 passes 2^31 past 2^26 slabs, 32 GB of
// entries); lengths within one version stay int.

// The version of x's neighbour array that update tau reads (Property 1), -1 if none.
// Returns its entries' start and length through off/len.
__device__ __forceinline__ int find_version(const Ctx& C, int x, int tau, i64& off, int& len) {
    int v = __ldcg(C.head + x);
    while (v >= 0) {
        Version ver = load_version(C.vers + v);
        if (CHECK && ver.x != x) check_fail(C, CHK_WALK_FOREIGN, tau, x, v);
        if (ver.ct_min <= tau) {
            if (CHECK && ver.dt_max < tau) check_fail(C, CHK_WALK_EXPIRED, tau, x, v);
            off = (i64)ver.slab * 32; len = ver.len;
            return v;
        }
        v = ver.prev;
    }
    off = 0; len = 0;
    return -1;
}

// First index in entries [off, off+len) whose neighbour is >= c (> c when `upper`).
__device__ __forceinline__ int lower_nbr(const Ctx& C, i64 off, int len, int c, bool upper = false) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int v = __ldcg(&C.entries[off + mid].nbr);
        if (v < c || (upper && v == c)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is an entry with neighbour c and a label matching `want` visible to tau in entries
// [off, off+len)? Re-insertions within one batch leave several entries of one neighbour,
// each with its own lifetime.
__device__ __forceinline__ bool has_edge(const Ctx& C, i64 off, int len, int c, int tau, int want) {
    for (int k = lower_nbr(C, off, len, c); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != c) return false;
        if (e.ct <= tau && tau <= e.dt && (want == ANY || e.elab == want)) return true;
    }
    return false;
}

// The entry of neighbour y alive at tau (the last one with ct <= tau), as an index into
// entries, or -1: the entry a deletion at tau ends.
__device__ i64 find_at(const Ctx& C, i64 off, int len, int y, int tau) {
    i64 found = -1;
    for (int k = lower_nbr(C, off, len, y); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y || e.ct > tau) break;
        found = off + k;
    }
    return found;
}

// Live entry of neighbour y in version v (dt == INF), or -1.
__device__ i64 find_live(const Ctx& C, int v, int y) {
    if (v < 0) return -1;
    Version ver = load_version(C.vers + v);
    i64 off = (i64)ver.slab * 32;
    for (int k = lower_nbr(C, off, ver.len, y); k < ver.len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y) return -1;
        if (e.dt == INF_TS) return off + k;
    }
    return -1;
}

__device__ __forceinline__ const int* plan_ptr(const Ctx& C, int slot, int p) {
    return C.plans + ((size_t)slot * PMAX + p) * PLAN_INTS;
}

// Which backward neighbour's list level i scans: the first shortest. The updater (to cut
// level-2 chunks) and the executors (to run items) both use it, so they agree on what an
// item's positions index.
__device__ __forceinline__ int pick_base(const int* pl, int i, const int* mlen) {
    int nb = __ldcg(pl + PL_BNCNT + i);
    int best = 0, bl = 0x7fffffff;
    for (int k = 0; k < nb; ++k) {
        int l = mlen[__ldcg(pl + PL_BNPOS + i * KMAX + k)];
        if (l < bl) { bl = l; best = k; }
    }
    return best;
}
