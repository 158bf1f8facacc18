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

// find_version for both ends of an update at once: the two heads, then the two versions
// they name, are loaded together (one round trip each, not two); a walk that must go past
// its head goes on alone. Returns nothing: the lists come back through a0 and a1.
__device__ __forceinline__ void find_versions(const Ctx& C, int x0, int x1, int tau, Adj& a0, Adj& a1) {
    const int v0 = __ldcg(C.head + x0), v1 = __ldcg(C.head + x1);
    Version w0 = {}, w1 = {};
    if (v0 >= 0) w0 = load_version_list(C.vers + v0);
    if (v1 >= 0) w1 = load_version_list(C.vers + v1);
    const bool here0 = v0 >= 0 && w0.ct_min <= tau && (!CHECK || w0.x == x0);
    const bool here1 = v1 >= 0 && w1.ct_min <= tau && (!CHECK || w1.x == x1);
    if (here0 && !(CHECK && w0.dt_max < tau)) a0 = adj_of(w0); else find_version(C, x0, tau, a0);
    if (here1 && !(CHECK && w1.dt_max < tau)) a1 = adj_of(w1); else find_version(C, x1, tau, a1);
}

// A step of a four-way search (SEARCH_WAYS 4, search_steps.cuh): the pivots of [lo, hi)
// in the run at off, their neighbours loaded together.
struct Pivots { Split4 m; int v1, v2, v3; };
__device__ __forceinline__ Pivots pivots(const Ctx& C, i64 off, int lo, int hi) {
    Pivots p;
    p.m = split4(lo, hi);
    p.v1 = __ldcg(&C.entries[off + p.m.m1].nbr);
    p.v2 = __ldcg(&C.entries[off + p.m.m2].nbr);
    p.v3 = __ldcg(&C.entries[off + p.m.m3].nbr);
    return p;
}

// Does a neighbour v come before the first one >= c (> c when `upper`)?
__device__ __forceinline__ bool before(int v, int c, bool upper) { return v < c || (upper && v == c); }

// [lo, hi) narrowed to the part of p that holds the first neighbour >= c (> c when `upper`).
__device__ __forceinline__ void narrow(const Pivots& p, int c, bool upper, int& lo, int& hi) {
    narrow4(p.m, before(p.v1, c, upper) + before(p.v2, c, upper) + before(p.v3, c, upper), lo, hi);
}

// Two searches' four-way steps in lockstep while either has four or more entries left: each
// step loads both runs' pivots before narrowing either, so the shorter search's steps hide
// under the longer's (lower_nbr_both; the short path's two-sided search).
__device__ __forceinline__ void narrow_both(const Ctx& C, i64 off0, int c0, bool up0, int& lo0, int& hi0,
                                            i64 off1, int c1, bool up1, int& lo1, int& hi1) {
    while (hi0 - lo0 >= 4 || hi1 - lo1 >= 4) {
        const bool o0 = hi0 - lo0 >= 4, o1 = hi1 - lo1 >= 4;
        const Pivots p0 = o0 ? pivots(C, off0, lo0, hi0) : Pivots{};
        const Pivots p1 = o1 ? pivots(C, off1, lo1, hi1) : Pivots{};
        if (o0) narrow(p0, c0, up0, lo0, hi0);
        if (o1) narrow(p1, c1, up1, lo1, hi1);
    }
}

// First index in the run of entries [off, off+len) whose neighbour is >= c (> c when `upper`).
// SEARCH_WAYS 4 takes three pivots a step while four or more entries are left: about half
// the dependent loads of a binary search (at most 8 instead of 15 for 27K entries), for
// about 1.5x the loads.
// W: the ways (SEARCH_WAYS, or EXEC_SEARCH_WAYS for the executor's membership tests).
template <int W = SEARCH_WAYS>
__device__ __forceinline__ int lower_nbr(const Ctx& C, i64 off, int len, int c, bool upper = false) {
    int lo = 0, hi = len;  // the answer is in [lo, hi]
    if constexpr (W == 4)
        while (hi - lo >= 4) narrow(pivots(C, off, lo, hi), c, upper, lo, hi);
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int v = __ldcg(&C.entries[off + mid].nbr);
        if (v < c || (upper && v == c)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// lower_nbr(c) by the whole warp (every lane gets it): each step loads 32 pivots spread
// over the range left and keeps the gap between the last pivot below c and the next, so a
// run of 27K entries takes three dependent loads instead of fifteen.
__device__ int warp_lower_nbr(const Ctx& C, i64 off, int len, int c, int lane) {
    int lo = 0, hi = len;  // the answer is in [lo, hi]
    while (hi - lo > 32) {
        const i64 span = hi - lo;
        const int q = lo + (int)(span * (lane + 1) / 33);  // in (lo, hi), increasing
        const int below = __popc(__ballot_sync(0xffffffffu, __ldcg(&C.entries[off + q].nbr) < c));
        const int nlo = below ? lo + (int)(span * below / 33) + 1 : lo;
        hi = below < 32 ? lo + (int)(span * (below + 1) / 33) : hi;
        lo = nlo;
    }
    const int q = lo + lane;
    return lo + __popc(__ballot_sync(0xffffffffu, q < hi && __ldcg(&C.entries[off + q].nbr) < c));
}

// lower_nbr(c) in both runs of a list with a tail at once: kb in the base, kt in the tail.
// The two binary searches advance in lockstep, each step issuing both runs' loads before
// using either, so that a lookup costs about the longer search's latency, not the sum of
// both (the tail search's steps hide under the base's). Callers take lower_nbr alone for a
// list without a tail. The addresses are computed in each step on purpose: with the runs'
// pointers hoisted out of the loop, ptxas (nvcc 13.0, sm_90, 80 registers at MIN_BLOCKS 3)
// issued the tail's load only after the base's compare, one search after the other again.
template <int W = SEARCH_WAYS>
__device__ __forceinline__ void lower_nbr_both(const Ctx& C, const Adj& a, int c, int& kb, int& kt) {
    const i64 toff = a.off2 + a.blen;
    int lb = 0, hb = a.blen, lt = 0, ht = a.len - a.blen;
    if constexpr (W == 4) narrow_both(C, a.off, c, false, lb, hb, toff, c, false, lt, ht);
    while (lb < hb || lt < ht) {
        const bool ob = lb < hb, ot = lt < ht;
        const int mb = (lb + hb) >> 1, mt = (lt + ht) >> 1;
        const int vb = ob ? __ldcg(&C.entries[a.off + mb].nbr) : 0;
        const int vt = ot ? __ldcg(&C.entries[toff + mt].nbr) : 0;
        if (ob) { if (vb < c) lb = mb + 1; else hb = mb; }
        if (ot) { if (vt < c) lt = mt + 1; else ht = mt; }
    }
    kb = lb;
    kt = lt;
}

// lower_nbr_both's search for any two runs, [off0, off0+len0) and [off1, off1+len1), and
// either bound (`upper`): k0 and k1. (lower_nbr_both stays apart while its build is the one
// the device measured: folded into this, ptxas lays the kernel out differently.)
template <int W = SEARCH_WAYS>
__device__ __forceinline__ void lower_nbr_two(const Ctx& C, i64 off0, int len0, i64 off1, int len1, int c,
                                              bool upper, int& k0, int& k1) {
    int l0 = 0, h0 = len0, l1 = 0, h1 = len1;
    if constexpr (W == 4) narrow_both(C, off0, c, upper, l0, h0, off1, c, upper, l1, h1);
    while (l0 < h0 || l1 < h1) {
        const bool o0 = l0 < h0, o1 = l1 < h1;
        const int m0 = (l0 + h0) >> 1, m1 = (l1 + h1) >> 1;
        const int v0 = o0 ? __ldcg(&C.entries[off0 + m0].nbr) : 0;
        const int v1 = o1 ? __ldcg(&C.entries[off1 + m1].nbr) : 0;
        if (o0) { if (before(v0, c, upper)) l0 = m0 + 1; else h0 = m0; }
        if (o1) { if (before(v1, c, upper)) l1 = m1 + 1; else h1 = m1; }
    }
    k0 = l0;
    k1 = l1;
}

// Entry k of the run [off, off+len); past its end, one whose neighbour (-1) is no vertex.
__device__ __forceinline__ Entry run_entry(const Ctx& C, i64 off, int k, int len) {
    return k < len ? load_entry(C.entries + off + k) : Entry{-1, 0, 0, 0};
}

// Is an entry with neighbour c (>= 0) and a label matching `want` visible to tau among the
// entries [k, len) of the run [off, off+len), k being c's lower bound there and e entry k
// (run_entry)? Re-insertions within one batch leave several entries of one neighbour, each
// with its own lifetime: every one is checked.
__device__ __forceinline__ bool scan_has_edge(const Ctx& C, i64 off, int k, int len, Entry e, int c,
                                              int tau, int want) {
    for (; e.nbr == c; e = run_entry(C, off, ++k, len))
        if (e.ct <= tau && tau <= e.dt && (want == ANY || e.elab == want)) return true;
    return false;
}

// The same in the run [off, off+len).
template <int W = SEARCH_WAYS>
__device__ __forceinline__ bool run_has_edge(const Ctx& C, i64 off, int len, int c, int tau, int want) {
    const int k = lower_nbr<W>(C, off, len, c);
    return scan_has_edge(C, off, k, len, run_entry(C, off, k, len), c, tau, want);
}

// The same in a version's list. Without a tail, one search of the one run; with one, both
// runs' searches at once (lower_nbr_both), then both runs' first entries of c loaded
// together.
template <int W = SEARCH_WAYS>
__device__ __forceinline__ bool has_edge(const Ctx& C, const Adj& a, int c, int tau, int want) {
    if (a.len == a.blen) return run_has_edge<W>(C, a.off, a.blen, c, tau, want);
    const i64 toff = a.off2 + a.blen;
    const int tlen = a.len - a.blen;
    int kb, kt;
    lower_nbr_both<W>(C, a, c, kb, kt);
    const Entry eb = run_entry(C, a.off, kb, a.blen), et = run_entry(C, toff, kt, tlen);
    return scan_has_edge(C, a.off, kb, a.blen, eb, c, tau, want) ||
           scan_has_edge(C, toff, kt, tlen, et, c, tau, want);
}

// The entry of neighbour y alive at tau (the last one with ct <= tau) among the entries
// [k, len) of the run [off, off+len), k being y's lower bound there, as an index into
// entries, or -1.
__device__ i64 scan_find_at(const Ctx& C, i64 off, int k, int len, int y, int tau) {
    i64 found = -1;
    for (; k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y || e.ct > tau) break;
        found = off + k;
    }
    return found;
}

// The same in the run [off, off+len).
__device__ i64 run_find_at(const Ctx& C, i64 off, int len, int y, int tau) {
    return scan_find_at(C, off, lower_nbr(C, off, len, y), len, y, tau);
}

// The same in a version's list (the tail's entries of y are the younger): the entry a
// deletion at tau ends. With a tail, both runs' searches at once.
__device__ i64 find_at(const Ctx& C, const Adj& a, int y, int tau) {
    if (a.len == a.blen) return run_find_at(C, a.off, a.blen, y, tau);
    int kb, kt;
    lower_nbr_both(C, a, y, kb, kt);
    const i64 t = scan_find_at(C, a.off2 + a.blen, kt, a.len - a.blen, y, tau);
    return t >= 0 ? t : scan_find_at(C, a.off, kb, a.blen, y, tau);
}

// Live entry (dt == INF) of neighbour y among the entries [k, len) of the run [off,
// off+len), k being y's lower bound there, or -1.
__device__ i64 scan_find_live(const Ctx& C, i64 off, int k, int len, int y) {
    for (; k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y) return -1;
        if (e.dt == INF_TS) return off + k;
    }
    return -1;
}

// The same in the run [off, off+len).
__device__ i64 run_find_live(const Ctx& C, i64 off, int len, int y) {
    return scan_find_live(C, off, lower_nbr(C, off, len, y), len, y);
}

// Live entry of neighbour y in version v (base or tail), or -1. One code path for every
// lane, whether its vertex has a version and its list a tail or not: both runs searched at
// once (a missing tail, or list, is empty), then the base's entries of y and the tail's in
// one loop. So the lanes of a warp that search lists of their own issue each step's loads
// together (JOB_TRACE=8, session 36: a J_CLASSIFY task's lanes searching their own lists
// took 4x as long as one lane, or all lanes one list, when lists with and without a tail
// took paths of their own).
// SINCE (the deletion path, DELETE_PATH): the entry that was live when the batch beginning
// at tau `since` began; the batch's deletions may have lowered its dt meanwhile (dt >= since).
template <bool SINCE>
__device__ __forceinline__ i64 find_live_in(const Ctx& C, int v, int y, int since) {
    Adj a{0, 0, 0, 0};
    if (v >= 0) a = adj_of(load_version_list(C.vers + v));
    int kb, kt;
    lower_nbr_both(C, a, y, kb, kt);
    i64 off = a.off;
    int k = kb, n = a.blen;
    bool in_tail = false;
    while (true) {
        const Entry e = run_entry(C, off, k, n);  // past the run's end: no vertex (-1)
        if (e.nbr == y) {
            if (SINCE ? e.dt >= since : e.dt == INF_TS) return off + k;
            ++k;
        } else if (in_tail) {
            return -1;
        } else {
            in_tail = true;
            off = a.off2 + a.blen;
            k = kt;
            n = a.len - a.blen;
        }
    }
}

__device__ i64 find_live(const Ctx& C, int v, int y) { return find_live_in<false>(C, v, y, 0); }
__device__ __forceinline__ i64 find_live_since(const Ctx& C, int v, int y, int since) {
    return find_live_in<true>(C, v, y, since);
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

// Whether the items of an update run a plan on its ends swapped (b as step 0, a as step
// 1): only a plan that stands for its reversed start edge too (PL_FLIP: counting, one plan
// per orbit, dcsm.engine.plan.orbit_plans), and only where level 2 then scans the shorter
// list (a 4-cycle walks the neighbours of the lower-degree end: ~3x fewer membership tests
// on a power-law graph). len_a, len_b: the ends' version lengths at tau, which the updater
// (cutting level-2 chunks) and every item of the update (donated ones too) read alike.
__device__ __forceinline__ bool flip_ends(const int* pl, int len_a, int len_b) {
    if (!__ldcg(pl + PL_FLIP) || __ldcg(pl + PL_N) < 3 || __ldcg(pl + PL_BNCNT + 2) != 1)
        return false;  // level 2 next to both ends scans the shorter of them either way
    return __ldcg(pl + PL_BNPOS + 2 * KMAX) == 0 ? len_b < len_a : len_a < len_b;
}
