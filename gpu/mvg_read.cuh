// mvg_read.cuh -- reading the multi-version graph as update tau sees it (Property 1),
// and the plan blobs. Buffers read: head, vers, entries (through L2), plans; written:
// none.

// Entry offsets and indices are 64-bit (slab * 32 passes 2^31 past 2^26 slabs, 32 GB of
// entries); lengths within one version stay int.

// A version's list as readers see it: positions [0, len), position p being entry off + p
// in the base run (p < blen) and entry off2 + p in the tail run (p >= blen); each run is
// sorted by (neighbour, ct), and a neighbour's tail entries are younger than its base ones.
struct Adj { i64 off, off2; int len, blen; };

__device__ __forceinline__ i64 adj_at(const Adj& a, int p) { return (p < a.blen ? a.off : a.off2) + p; }

__device__ __forceinline__ Adj adj_of(const Version& v) {
    Adj a;
    a.off = (i64)v.slab * 32;
    a.off2 = a.off + v.toff - v.blen;
    a.len = v.len;
    a.blen = v.blen;
    return a;
}

// Lane src's list (a warp shuffle of every field).
__device__ __forceinline__ Adj shfl_adj(const Adj& a, int src) {
    Adj r;
    r.off = __shfl_sync(0xffffffffu, a.off, src);
    r.off2 = __shfl_sync(0xffffffffu, a.off2, src);
    r.len = __shfl_sync(0xffffffffu, a.len, src);
    r.blen = __shfl_sync(0xffffffffu, a.blen, src);
    return r;
}

__device__ __forceinline__ bool same_adj(const Adj& a, const Adj& b) {
    return a.off == b.off && a.off2 == b.off2 && a.len == b.len && a.blen == b.blen;
}

// The version of x's neighbour array that update tau reads (Property 1), -1 if none; its
// list through `a` (empty if none).
__device__ __forceinline__ int find_version(const Ctx& C, int x, int tau, Adj& a) {
    int v = __ldcg(C.head + x);
    while (v >= 0) {
        const Version ver = load_version_list(C.vers + v);
        if (CHECK && ver.x != x) check_fail(C, CHK_WALK_FOREIGN, tau, x, v);
        if (ver.ct_min <= tau) {
            if (CHECK && ver.dt_max < tau) check_fail(C, CHK_WALK_EXPIRED, tau, x, v);
            a = adj_of(ver);
            return v;
        }
        v = ver.prev;
    }
    a.off = a.off2 = 0; a.len = a.blen = 0;
    return -1;
}

// First index in the run of entries [off, off+len) whose neighbour is >= c (> c when `upper`).
__device__ __forceinline__ int lower_nbr(const Ctx& C, i64 off, int len, int c, bool upper = false) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int v = __ldcg(&C.entries[off + mid].nbr);
        if (v < c || (upper && v == c)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is an entry with neighbour c and a label matching `want` visible to tau in the run of
// entries [off, off+len)? Re-insertions within one batch leave several entries of one
// neighbour, each with its own lifetime.
__device__ __forceinline__ bool run_has_edge(const Ctx& C, i64 off, int len, int c, int tau, int want) {
    for (int k = lower_nbr(C, off, len, c); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != c) return false;
        if (e.ct <= tau && tau <= e.dt && (want == ANY || e.elab == want)) return true;
    }
    return false;
}

// The same in a version's list, base and tail.
__device__ __forceinline__ bool has_edge(const Ctx& C, const Adj& a, int c, int tau, int want) {
    return run_has_edge(C, a.off, a.blen, c, tau, want) ||
           (a.len > a.blen && run_has_edge(C, a.off2 + a.blen, a.len - a.blen, c, tau, want));
}

// The entry of neighbour y alive at tau (the last one with ct <= tau) in the run [off,
// off+len), as an index into entries, or -1.
__device__ i64 run_find_at(const Ctx& C, i64 off, int len, int y, int tau) {
    i64 found = -1;
    for (int k = lower_nbr(C, off, len, y); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y || e.ct > tau) break;
        found = off + k;
    }
    return found;
}

// The same in a version's list (the tail's entries of y are the younger): the entry a
// deletion at tau ends.
__device__ i64 find_at(const Ctx& C, const Adj& a, int y, int tau) {
    const i64 t = run_find_at(C, a.off2 + a.blen, a.len - a.blen, y, tau);
    return t >= 0 ? t : run_find_at(C, a.off, a.blen, y, tau);
}

// Live entry (dt == INF) of neighbour y in the run [off, off+len), or -1.
__device__ i64 run_find_live(const Ctx& C, i64 off, int len, int y) {
    for (int k = lower_nbr(C, off, len, y); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y) return -1;
        if (e.dt == INF_TS) return off + k;
    }
    return -1;
}

// Live entry of neighbour y in version v (base or tail), or -1.
__device__ i64 find_live(const Ctx& C, int v, int y) {
    if (v < 0) return -1;
    const Adj a = adj_of(load_version_list(C.vers + v));
    const i64 b = run_find_live(C, a.off, a.blen, y);
    return b >= 0 ? b : run_find_live(C, a.off2 + a.blen, a.len - a.blen, y);
}

__device__ __forceinline__ const int* plan_ptr(const Ctx& C, int slot, int p) {
    return C.plans + ((size_t)slot * PMAX + p) * PLAN_INTS;
}

// Which backward neighbour's list level i scans: the first shortest. The updater (to cut
// level-2 chunks) and the executors (to run items) both use it, so they agree on what an
// item's positions index.
__device__ __forceinline__ int pick_base(const int* pl, int i, const Adj* madj) {
    int nb = __ldcg(pl + PL_BNCNT + i);
    int best = 0, bl = 0x7fffffff;
    for (int k = 0; k < nb; ++k) {
        int l = madj[__ldcg(pl + PL_BNPOS + i * KMAX + k)].len;
        if (l < bl) { bl = l; best = k; }
    }
    return best;
}
