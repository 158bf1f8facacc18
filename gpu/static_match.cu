// static_match.cu -- static subgraph matching on the GPU: every embedding of one pattern in
// an immutable CSR snapshot of the data graph (backfill on registration, `dcsm match`).
//
// Semantics: exactly the CPU engine's static matching (dcsm/engine/cpu_kernels.py,
// static_matches): plan 0 of the pattern's QueryPlan (dcsm/engine/plan.py) is run from every
// ordered data edge (a, b); a match is an injective map with equal vertex labels (-1 = any)
// whose every pattern edge lands on a data edge with an equal label (-1 = any). The plan's
// sym_lt / sym_gt masks break the pattern's symmetry (plan.py, static_plan): a `distinct`
// pattern keeps one embedding per subgraph and compares EXTERNAL vertex ids (so it keeps
// the CPU's representative); an embeddings plan finds one embedding of each automorphism
// orbit and compares the DEGREE ORDER, which is the snapshot's own vertex order (below), so
// a level's constraints cut the scanned list to one range by two binary searches and the
// constrained vertices are the low-degree ones; each match it finds stands for `weight`
// embeddings, written through `images` (row k: image[x] = found[images[k][x]]).
//
// The snapshot numbers its vertices by label, then degree (csr_from_edges): vertex r is the
// r-th by (label, degree, caller's id). So every neighbour list holds each label's
// neighbours as one run, and a level whose vertex has a fixed label scans only that run
// (each block finds the label's id range once, SP_IDLO/SP_IDHI); within a label, a hub's
// neighbours above it are a short suffix (the orientation of triangle counting). `orig`
// maps r back to the caller's id, in which every row is written.
//
// Design, in the style of the GPU static matchers gMatch and EGSM (Sun & Luo, SIGMOD
// 2023): one warp at a time per start edge (or, counting, per unit of one: below),
// depth-first over the plan's order with the warp's stack
// in local memory (every lane holds the same copy). A level scans the neighbour list
// of its backward neighbour with the shortest list, only the range of ids that can match
// (level_range), 32 entries per window, one candidate per lane: base edge label,
// injectivity, symmetry on external ids, then membership (with edge label) in every other
// backward neighbour's list by binary search; a ballot gives the window's candidates, taken
// lowest lane first. The last level is only counted (popcount) unless rows are written, and
// when counting, trailing pendant steps are not walked at all: SP_TAIL (tail_product). An
// edge label that every data edge has is lifted from the plan by the host
// (DevicePlan.for_graph), so those checks read nothing. Warps claim work from one global
// counter (guided self-scheduling: a quarter of what is left per warp, 1 to CLAIM_MAX items
// a claim): start edges when enumerating, units when counting (static_units: the 32-entry
// windows of a start edge's level 2), so a hub's start spreads over many warps and the
// tail stays short; a warp adds its count with one 128-bit atomic add at the end.
// gpu/executor.cuh (run_item, eval_window) is the incremental version of the same loop.
//
// Buffers (device memory; gpu/static_match.py allocates all of them on its stream, and no
// two launches that write the same buffer overlap):
//   off    int64[nv+1]    CSR row starts, off[nv] = E2 entries; csr_offsets writes, the
//                         matching kernels read.
//   nbr    int32[>= E2]   neighbour ids, ascending within each row; csr_gather writes,
//                         matching kernels read (the start edges are its entries [0, E2)).
//   elab   int32[>= E2]   edge label beside each nbr entry; as nbr.
//   vlab   int32[nv]      vertex labels; ext int64[nv]: external ids (symmetry breaking);
//                         orig int32[nv]: the caller's id of each vertex; csr_relabel writes
//                         them in the snapshot's order, matching kernels read.
//   plan   int32[SP_INTS] plan 0 of one QueryPlan (layout below); host uploads; every
//                         block copies it into shared memory first.
//   images int32[weight, n] the permutations that give a found match's `weight` embeddings
//                         (row 0 the identity); host uploads; static_emit reads.
//   ctl    u64[5]         [claim, total, rows, error, total_hi]: host zeroes it before each
//                         launch; warps atomicAdd claim (items taken), total and total_hi
//                         (count kernel, once per warp: a 128-bit sum with carry), rows
//                         (emit kernel, once per written window); kernels atomicOr error
//                         bits (ERR_*); host reads it after.
//   per_start u64[t1-t0]  static_count_starts: matches of start edge t0 + k, written once
//                         by the warp that ran it; host reads it to cut emit waves.
//   out    int32[cap, n]  static_emit: match rows (row[x] = data vertex of query vertex
//                         x, the caller's id via orig), `weight` rows a found match; a warp writes the
//                         rows it reserved in ctl[2]; host reads after the launch.
//   Counts (ctl[1] and ctl[4], per_start) and ranks are in found matches; the host multiplies by
//   `weight`.
//   CSR build (csr_from_edges): vkey int64[nv] (csr_vertex_init, csr_degrees, then
//   csr_label_keys write; cupy.argsort reads), vorder int64[nv] (cupy.argsort writes,
//   csr_label_keys and csr_relabel read), rank int32[nv] (csr_relabel writes, csr_keys
//   reads), keys int64[2*ne] (csr_keys writes; cupy.argsort and csr_gather read), order
//   int64[2*ne] (cupy.argsort writes, csr_gather reads), row int32[2*ne] (csr_gather
//   writes, csr_offsets reads).
//
// Rank windows (emit waves). The matches of one start edge come out in a fixed order (one
// warp, windows in scan order, lanes ascending), so "the r-th match of start t" is well
// defined. static_emit writes, for start t0, only the matches of rank >= skip_first and, for
// start t1-1, only those of rank < take_last; every other start writes all of its matches.
// The host cuts [0, E2) into waves whose rows fit its buffer using static_count_starts'
// counts, so no wave can overflow, and a start with more matches than the buffer holds is
// split across waves (each re-walks its tree up to its window, counting only).

// ---- knobs the Python side overrides (defaults so the file also compiles alone) --------
#ifndef KMAX
#define KMAX 16  // dcsm.model.MAX_PATTERN_VERTICES
#endif
#ifndef THREADS
#define THREADS 256
#endif
#ifndef PAIRS_MAX_LIST
#define PAIRS_MAX_LIST 128  // count_last_pairs: longer last-level scans are walked alone
#endif
#ifndef COUNT4_MIN_BLOCKS
#define COUNT4_MIN_BLOCKS 4  // static_count4's minimum: 64 registers, not ptxas' 103 (faster)
#endif
#ifndef SEARCH_WAYS
#define SEARCH_WAYS 2  // lower_bound: 2 binary, 4 three pivots a step (search_steps.cuh)
#endif
#if SEARCH_WAYS != 2 && SEARCH_WAYS != 4
#error "SEARCH_WAYS must be 2 or 4"
#endif
#ifndef CLAIM_MAX
#define CLAIM_MAX 32  // most start edges one claim takes (one lane each for the start checks)
#endif
// ------------------------------------------------------------------------------------------

// COUNT_MIN_BLOCKS (unset by default): static_count's and static_count_starts'
// __launch_bounds__ minimum of blocks an SM, which caps their registers (ptxas picks its own
// count without one; static_count4 has COUNT4_MIN_BLOCKS instead).
#ifdef COUNT_MIN_BLOCKS
#define COUNT_BOUNDS __launch_bounds__(THREADS, COUNT_MIN_BLOCKS)
#else
#define COUNT_BOUNDS __launch_bounds__(THREADS)
#endif

#if CLAIM_MAX > 32
#error "CLAIM_MAX must be at most 32 (one lane per start edge of a claim)"
#endif
#if THREADS % 32 != 0
#error "THREADS must be a multiple of 32 (whole warps)"
#endif

typedef long long i64;
typedef unsigned long long u64;
typedef unsigned __int128 u128;  // counts: exact past 2^64 (a 6-path on a 43M-edge graph)

#define ANY (-1)
#define FULL_MASK 0xffffffffu

// Spliced in by the loader (gpu/loader.py, kernel_source), as the persistent kernel's parts.
#include "warp_lanes.cuh"
#include "search_steps.cuh"
#define NO_LIMIT 0xffffffffffffffffULL

// ctl words.
#define CTL_CLAIM 0
#define CTL_TOTAL 1
#define CTL_ROWS 2
#define CTL_ERROR 3
#define CTL_TOTAL_HI 4  // the high 64 bits of the count (CTL_TOTAL the low ones)
// Error bits in ctl[CTL_ERROR].
#define ERR_OUT_OVERFLOW 1ULL  // a wave's rows did not fit (the host's wave cut is wrong)
#define ERR_BAD_EDGE 2ULL      // csr_keys: an edge with lo >= hi or an id outside [0, nv)
#define ERR_DUPLICATE 4ULL     // csr_gather: the same edge twice
#define ERR_COUNT_OVERFLOW 8ULL  // a count passed 2^128 - 1, or a start's 2^64 - 1 (per_start)

// Plan blob (int32): plan 0 of a QueryPlan, arrays padded to KMAX as in plan.py.
#define SP_N 0                            // pattern vertices n
#define SP_ELAB 1                         // start edge label
#define SP_VLABEL 2                       // [KMAX] label required at step i
#define SP_BNCNT (SP_VLABEL + KMAX)       // [KMAX] backward neighbours of step i
#define SP_SYMLT (SP_BNCNT + KMAX)        // [KMAX] f(step i) < f(step j) for bits j
#define SP_SYMGT (SP_SYMLT + KMAX)        // [KMAX] f(step i) > f(step j) for bits j
#define SP_POS (SP_SYMGT + KMAX)          // [KMAX] step at which query vertex x is matched
#define SP_BNPOS (SP_POS + KMAX)          // [KMAX][KMAX] steps of the backward neighbours
#define SP_BNELAB (SP_BNPOS + KMAX * KMAX)  // [KMAX][KMAX] label of edge (bn step, step i)
#define SP_ORDER (SP_BNELAB + KMAX * KMAX)  // what sym masks compare: ORDER_EXT / ORDER_DEGREE
#define SP_IDLO (SP_ORDER + 1)            // [KMAX] step i's vertices have ids in [lo, hi): the
#define SP_IDHI (SP_IDLO + KMAX)          // [KMAX] run of its label (each block fills them in)
#define SP_TAIL (SP_IDHI + KMAX)          // counting: steps [tail, n) are counted, not walked
#define SP_INTS (SP_TAIL + 1)

#define ORDER_EXT 0     // external ids (distinct patterns: the CPU's representative)
#define ORDER_DEGREE 1  // the snapshot's ids (label, degree): hubs last (embeddings plans)

// Kernel variants of one search loop.
#define MODE_COUNT 0   // total matches into ctl[CTL_TOTAL]
#define MODE_STARTS 1  // matches of each start edge into per_start
#define MODE_EMIT 2    // match rows into out (within the rank windows)

struct Csr {
    const i64* __restrict__ off;
    const int* __restrict__ nbr;
    const int* __restrict__ elab;
    const int* __restrict__ vlab;
    const i64* __restrict__ ext;
    const int* __restrict__ orig;
    int nv;
};

// A warp's depth-first search state (the same in every lane).
struct Search {
    int m[KMAX];         // data vertex matched at step j
    i64 moff[KMAX];      // its neighbour list nbr[moff, moff + mlen)
    int mlen[KMAX];
    i64 loff[KMAX];      // level i scans nbr[loff, loff + llen) ...
    int llen[KMAX];
    int lpos[KMAX];      // ... and is at the window starting at loff + lpos
    int lbest[KMAX];     // which backward neighbour's list that is
    unsigned lmask[KMAX];  // candidates of the current window not yet taken
};

__device__ __forceinline__ unsigned lanemask_lt(int lane) { return (1u << lane) - 1u; }

// The row holding entry t: the largest x with off[x] <= t (off[0] = 0 <= t < off[nv]).
__device__ __forceinline__ int row_of(const i64* __restrict__ off, int nv, i64 t) {
    int lo = 0, hi = nv;
    while (hi - lo > 1) {
        int mid = lo + ((hi - lo) >> 1);
        if (__ldg(off + mid) <= t) lo = mid; else hi = mid;
    }
    return lo;
}

// The first k in [0, len) with list[k] >= c (len if none). SEARCH_WAYS 4: three pivots a
// step while four or more entries are left (search_steps.cuh).
__device__ __forceinline__ int lower_bound(const int* __restrict__ list, int len, int c) {
    int lo = 0, hi = len;
#if SEARCH_WAYS == 4
    while (hi - lo >= 4) {
        const Split4 p = split4(lo, hi);
        const int v1 = __ldg(list + p.m1), v2 = __ldg(list + p.m2), v3 = __ldg(list + p.m3);
        narrow4(p, (v1 < c) + (v2 < c) + (v3 < c), lo, hi);
    }
#endif
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (__ldg(list + mid) < c) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// The first vertex whose label is >= want (> want when `past`); vlab is sorted.
__device__ int label_bound(const int* __restrict__ vlab, int nv, int want, bool past) {
    int lo = 0, hi = nv;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int l = __ldg(vlab + mid);
        if (l < want || (past && l == want)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is c in the sorted list nbr[off, off + len), with label `want` (ANY: any label)? The
// snapshot holds each edge once, so one lower bound decides.
__device__ __forceinline__ bool has_edge(const Csr& G, i64 off, int len, int c, int want) {
    int lo = lower_bound(G.nbr + off, len, c);
    return lo < len && __ldg(G.nbr + off + lo) == c &&
           (want == ANY || __ldg(G.elab + off + lo) == want);
}

// Vertex x's place in the order the sym masks compare.
__device__ __forceinline__ i64 order_key(const int* P, const Csr& G, int x) {
    return P[SP_ORDER] == ORDER_DEGREE ? (i64)x : __ldg(G.ext + x);
}

__device__ __forceinline__ void set_vertex(const Csr& G, Search& S, int j, int x) {
    S.m[j] = x;
    i64 o = __ldg(G.off + x);
    S.moff[j] = o;
    S.mlen[j] = (int)(__ldg(G.off + x + 1) - o);
}

// Can the plan's start edge map onto the data edge (a, b) with label lab? (The CPU's
// _start_ok: both vertex labels, the edge label, the symmetry of step 1 against step 0.)
__device__ __forceinline__ bool start_ok(const int* P, const Csr& G, int a, int b, int lab) {
    int la = P[SP_VLABEL], lb = P[SP_VLABEL + 1], le = P[SP_ELAB];
    if (la != ANY && __ldg(G.vlab + a) != la) return false;
    if (lb != ANY && __ldg(G.vlab + b) != lb) return false;
    if (le != ANY && lab != le) return false;
    int lt = P[SP_SYMLT + 1], gt = P[SP_SYMGT + 1];
    if ((lt | gt) & 1) {
        i64 ea = order_key(P, G, a), eb = order_key(P, G, b);
        if ((lt & 1) && !(eb < ea)) return false;
        if ((gt & 1) && !(eb > ea)) return false;
    }
    return true;
}

// Level i's current window: bit l set when entry lpos + l of the scanned list is a
// candidate for step i given m[0..i-1]. Cheap checks first, binary searches last. The
// vertex label, and on the degree order the symmetry, hold already: open_level scans only
// ids that satisfy them.
__device__ unsigned eval_window(const int* P, const Csr& G, const Search& S, int i, int lane) {
    bool ok = S.lpos[i] + lane < S.llen[i];
    if (ok) {
        i64 at = S.loff[i] + S.lpos[i] + lane;
        int c = __ldg(G.nbr + at);
        int best = S.lbest[i];
        int wb = P[SP_BNELAB + i * KMAX + best];
        ok = wb == ANY || __ldg(G.elab + at) == wb;
        for (int j = 0; ok && j < i; ++j) ok = S.m[j] != c;
        int lt = P[SP_SYMLT + i], gt = P[SP_SYMGT + i];
        if (ok && (lt | gt) && P[SP_ORDER] == ORDER_EXT) {
            i64 ec = order_key(P, G, c);
            for (int j = 0; ok && j < i; ++j) {
                if (!(((lt | gt) >> j) & 1)) continue;
                i64 ej = order_key(P, G, S.m[j]);
                if (((lt >> j) & 1) && !(ec < ej)) ok = false;
                if (((gt >> j) & 1) && !(ec > ej)) ok = false;
            }
        }
        int nb = P[SP_BNCNT + i];
        for (int k = 0; ok && k < nb; ++k) {
            if (k == best) continue;
            int j = P[SP_BNPOS + i * KMAX + k];
            ok = has_edge(G, S.moff[j], S.mlen[j], c, P[SP_BNELAB + i * KMAX + k]);
        }
    }
    return __ballot_sync(FULL_MASK, ok);
}

// Where in the sorted list `list` (len entries) step i's candidates can be: [*a, *b), the
// run of its label, and on the degree order within the bounds its symmetry constraints
// against m[0..i-1] set.
__device__ __forceinline__ void level_range(const int* P, const Csr& G, const Search& S, int i,
                                            const int* list, int len, int* a, int* b) {
    int above = P[SP_IDLO + i] - 1, below = P[SP_IDHI + i];  // candidates: above < c < below
    int lt = P[SP_SYMLT + i], gt = P[SP_SYMGT + i];
    if (P[SP_ORDER] == ORDER_DEGREE && (lt | gt)) {
        for (int j = 0; j < i; ++j) {
            if ((gt >> j) & 1) above = max(above, S.m[j]);
            if ((lt >> j) & 1) below = min(below, S.m[j]);
        }
    }
    *a = above < 0 ? 0 : lower_bound(list, len, above + 1);
    *b = below >= G.nv ? len : lower_bound(list, len, below);
    if (*b < *a) *b = *a;
}

// Level i's scanned list: the shortest backward-neighbour list (the first of equal ones, as
// the CPU engine does), only its level_range: S.lbest, S.loff, S.llen.
__device__ __forceinline__ void scan_range(const int* P, const Csr& G, Search& S, int i) {
    int nb = P[SP_BNCNT + i];
    int best = 0, bl = 0x7fffffff;
    for (int k = 0; k < nb; ++k) {
        int l = S.mlen[P[SP_BNPOS + i * KMAX + k]];
        if (l < bl) { bl = l; best = k; }
    }
    int jb = P[SP_BNPOS + i * KMAX + best];
    int a, b;
    level_range(P, G, S, i, G.nbr + S.moff[jb], S.mlen[jb], &a, &b);
    S.lbest[i] = best;
    S.loff[i] = S.moff[jb] + a;
    S.llen[i] = b - a;
}

// Enter level i at the window starting at entry `first` of its scanned list, evaluated.
__device__ void open_level(const int* P, const Csr& G, Search& S, int i, int lane, int first) {
    scan_range(P, G, S, i);
    S.lpos[i] = first;
    S.lmask[i] = first < S.llen[i] ? eval_window(P, G, S, i, lane) : 0u;
}

// Counting only: the matches of steps [t, n) given m[0..t-1], when each of those steps has
// one backward neighbour, before t, joined by an edge of any label, symmetry constraints
// only against steps before t, and (when there are several) fixed labels all different, so
// that their candidate sets are disjoint (static_match.tail_start checks it all, SP_TAIL):
// the product of their candidate counts. A step's candidates are its level_range of its
// neighbour's list, less the vertices m[0..t-1] in it (lane j tests m[j]).
// p * f; sets *over when that passes 2^128 - 1 (64-bit multiplies only).
__device__ __forceinline__ u128 mul_checked(u128 p, u64 f, bool* over) {
    u64 hi = (u64)(p >> 64);
    u128 low = (u128)(u64)p * f;
    if (hi == 0) return low;
    u64 h = hi * f, h2 = h + (u64)(low >> 64);
    if (__umul64hi(hi, f) || h2 < h) *over = true;
    return ((u128)h2 << 64) | (u64)low;
}

// Sets *over when the product passes 2^128 - 1.
__device__ u128 tail_product(const int* P, const Csr& G, const Search& S, int t, int n,
                             int lane, bool* over) {
    u128 prod = 1;
    for (int i = t; i < n && prod; ++i) {
        int jb = P[SP_BNPOS + i * KMAX];
        const int* list = G.nbr + S.moff[jb];
        int len = S.mlen[jb], a, b;
        level_range(P, G, S, i, list, len, &a, &b);
        bool taken = false;
        if (lane < t) {
            int x = S.m[lane];
            int k = a + lower_bound(list + a, b - a, x);
            taken = k < b && __ldg(list + k) == x;
        }
        prod = mul_checked(prod, (u64)(b - a - __popc(__ballot_sync(FULL_MASK, taken))), over);
    }
    return prod;
}

// Counting only: the matches over the concatenation of the lanes' scans of step L, 32
// entries a round. Each lane's S holds its own m, moff, mlen[0..L-1] (steps below L - NV the
// same in every lane) and its scan of step L (S.lbest[L], from S.loff[L]); it walks `len`
// entries of it (0: none). Entry g of the concatenation goes to lane g % 32, which finds the
// lane owning it by a binary search over the lanes' inclusive prefix sums and makes
// eval_window's checks against that owner's steps L - NV .. L - 1. With NEXT, step L is not
// the last: each round's candidates go on to step L + 1 (walk_next), so the lanes' own steps
// are read from registers taken at the start (walk_next rewrites S). The sum of the lens must
// fit an int (callers bound each by PAIRS_MAX_LIST or a window).
template <int NV, bool NEXT>
__device__ u64 walk_scans(const int* P, const Csr& G, Search& S, int L, int len, int lane);

// The matches of steps L + 1 (the last) for the candidates the lanes hold at step L (`ok`;
// lane's step L is x, its steps L - NV .. L - 1 are om, ooff, olen): each such lane sets
// them as its own and finds its scan of step L + 1; scans of PAIRS_MAX_LIST entries or fewer
// are walked together (walk_scans), longer ones one candidate at a time.
template <int NV>
__device__ u64 walk_next(const int* P, const Csr& G, Search& S, int L, bool ok, int x,
                         const int* om, const i64* ooff, const int* olen, int lane) {
    const int v0 = L - NV;
    int len = 0;
    if (ok) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            S.m[v0 + k] = om[k];
            S.moff[v0 + k] = ooff[k];
            S.mlen[v0 + k] = olen[k];
        }
        set_vertex(G, S, L, x);
        scan_range(P, G, S, L + 1);
        len = S.llen[L + 1];
    }
    const unsigned longs = __ballot_sync(FULL_MASK, len > PAIRS_MAX_LIST);
    u64 found = walk_scans<NV + 1, false>(P, G, S, L + 1, len > PAIRS_MAX_LIST ? 0 : len, lane);
    for (unsigned rest = longs; rest; rest &= rest - 1u) {
        // Lane l's steps for every lane (from the arguments: S is each lane's no more).
        const int l = __ffs(rest) - 1;
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            S.m[v0 + k] = __shfl_sync(FULL_MASK, om[k], l);
            S.moff[v0 + k] = __shfl_sync(FULL_MASK, ooff[k], l);
            S.mlen[v0 + k] = __shfl_sync(FULL_MASK, olen[k], l);
        }
        set_vertex(G, S, L, __shfl_sync(FULL_MASK, x, l));
        scan_range(P, G, S, L + 1);
        for (S.lpos[L + 1] = 0; S.lpos[L + 1] < S.llen[L + 1]; S.lpos[L + 1] += 32)
            found += (u64)__popc(eval_window(P, G, S, L + 1, lane));
    }
    return found;
}

template <int NV, bool NEXT>
__device__ u64 walk_scans(const int* P, const Csr& G, Search& S, int L, int len, int lane) {
    static_assert(NV >= 1 && NV <= 3, "one to three steps differ between lanes");
    const int incl = warp_inclusive_sum(len, lane);
    const int total = __shfl_sync(FULL_MASK, incl, 31);
    const int excl = incl - len, v0 = L - NV;
    const int nb = P[SP_BNCNT + L], lt = P[SP_SYMLT + L], gt = P[SP_SYMGT + L];
    const bool ext_sym = (lt | gt) && P[SP_ORDER] == ORDER_EXT;
    // This lane's own steps v0.. and scan: read from S as the rounds go, unless walk_next
    // rewrites S (NEXT), then kept in registers (which the kernel pays for: static_count4).
    int mm[NEXT ? NV : 1], ml[NEXT ? NV : 1];
    i64 mo[NEXT ? NV : 1];
    if constexpr (NEXT) {
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            mm[k] = S.m[v0 + k];
            mo[k] = S.moff[v0 + k];
            ml[k] = S.mlen[v0 + k];
        }
    }
    const int mbest = S.lbest[L];
    const i64 mloff = S.loff[L];
    u64 found = 0;
    for (int g0 = 0; g0 < total; g0 += 32) {
        const int g = g0 + lane;
        const int o = owning_lane(incl, g);
        int om[NV], olen[NV];
        i64 ooff[NV];
#pragma unroll
        for (int k = 0; k < NV; ++k) {
            om[k] = __shfl_sync(FULL_MASK, NEXT ? mm[k] : S.m[v0 + k], o);
            ooff[k] = __shfl_sync(FULL_MASK, NEXT ? mo[k] : S.moff[v0 + k], o);
            olen[k] = __shfl_sync(FULL_MASK, NEXT ? ml[k] : S.mlen[v0 + k], o);
        }
        const int ob = __shfl_sync(FULL_MASK, mbest, o);
        const i64 at = __shfl_sync(FULL_MASK, mloff, o) + (g - __shfl_sync(FULL_MASK, excl, o));
        bool ok = g < total;
        int x = 0;
        if (ok) {
            x = __ldg(G.nbr + at);
            const int wb = P[SP_BNELAB + L * KMAX + ob];
            ok = wb == ANY || __ldg(G.elab + at) == wb;
#pragma unroll
            for (int k = 0; k < NV; ++k) ok = ok && om[k] != x;
            for (int j = 0; ok && j < v0; ++j) ok = S.m[j] != x;
            if (ok && ext_sym) {
                const i64 ex = order_key(P, G, x);
                for (int j = 0; ok && j < L; ++j) {
                    if (!(((lt | gt) >> j) & 1)) continue;
                    int mj = j < v0 ? S.m[j] : om[0];
#pragma unroll
                    for (int k = 1; k < NV; ++k) if (j == v0 + k) mj = om[k];
                    const i64 ej = order_key(P, G, mj);
                    if (((lt >> j) & 1) && !(ex < ej)) ok = false;
                    if (((gt >> j) & 1) && !(ex > ej)) ok = false;
                }
            }
            for (int k = 0; ok && k < nb; ++k) {
                if (k == ob) continue;
                const int j = P[SP_BNPOS + L * KMAX + k];
                const int want = P[SP_BNELAB + L * KMAX + k];
                if (j < v0) {
                    ok = has_edge(G, S.moff[j], S.mlen[j], x, want);
                } else {
                    i64 jo = ooff[0];
                    int jl = olen[0];
#pragma unroll
                    for (int q = 1; q < NV; ++q) if (j == v0 + q) { jo = ooff[q]; jl = olen[q]; }
                    ok = has_edge(G, jo, jl, x, want);
                }
            }
        }
        if constexpr (NEXT) {
            found += walk_next<NV>(P, G, S, L, ok, x, om, ooff, olen, lane);
        } else {
            found += (u64)__popc(__ballot_sync(FULL_MASK, ok));
        }
    }
    return found;
}

// Counting only, the last level for every candidate of step n-2's current window at once
// (`mask`; S holds m[0..n-3]). Walking them one at a time gives each candidate's step n-1 a
// window of its own, mostly idle lanes when lists are short. Here lane l takes candidate l:
// it sets its own copy of m[n-2] (no later read of that step precedes the next set_vertex)
// and finds its step n-1 scan (scan_range). Scans of PAIRS_MAX_LIST entries or fewer are
// walked together (walk_scans); longer scans fill their windows anyway, and the warp walks
// them one candidate at a time, as extend would.
__device__ u64 count_last_pairs(const int* P, const Csr& G, Search& S, int n, unsigned mask,
                                int lane) {
    const int i = n - 2, L = n - 1;
    int len = 0, cand = 0;
    if ((mask >> lane) & 1) {
        cand = __ldg(G.nbr + S.loff[i] + S.lpos[i] + lane);
        set_vertex(G, S, i, cand);
        scan_range(P, G, S, L);
        len = S.llen[L];
    }
    const unsigned longs = __ballot_sync(FULL_MASK, len > PAIRS_MAX_LIST);
    u64 found = walk_scans<1, false>(P, G, S, L, len > PAIRS_MAX_LIST ? 0 : len, lane);
    for (unsigned rest = longs; rest; rest &= rest - 1u) {
        set_vertex(G, S, i, __shfl_sync(FULL_MASK, cand, __ffs(rest) - 1));
        scan_range(P, G, S, L);
        for (S.lpos[L] = 0; S.lpos[L] < S.llen[L]; S.lpos[L] += 32)
            found += (u64)__popc(eval_window(P, G, S, L, lane));
    }
    return found;
}

// Reserve `cnt` rows (lane 0, one atomicAdd); ~0 when they would not fit (error bit set).
__device__ __forceinline__ u64 reserve_rows(u64* ctl, u64 cnt, u64 cap, int lane) {
    u64 base = 0;
    if (lane == 0) {
        base = atomicAdd(ctl + CTL_ROWS, cnt);
        if (base + cnt > cap) {
            atomicOr(ctl + CTL_ERROR, ERR_OUT_OVERFLOW);
            base = NO_LIMIT;
        }
    }
    return __shfl_sync(FULL_MASK, base, 0);
}

// The `weight` rows a found match stands for, from dst on, lanes over the rows, in the
// caller's ids: the match is m[] with step `last` (-1: none) matched to c instead.
__device__ void write_images(const int* P, const Csr& G, const Search& S, int n, int last,
                             int c, const int* __restrict__ images, int weight, int* dst,
                             int lane) {
    for (int k = lane; k < weight; k += 32) {
        int* row = dst + (u64)k * n;
        for (int x = 0; x < n; ++x) {
            int step = P[SP_POS + __ldg(images + k * n + x)];
            row[x] = __ldg(G.orig + (step == last ? c : S.m[step]));
        }
    }
}

// Write the rows of every set bit of `sel` (candidates of the last level's current window):
// one row each, a lane per candidate, when weight is 1; else `weight` rows each, the warp
// writing one candidate's images at a time.
__device__ void emit_window(const int* P, const Csr& G, Search& S, int n, unsigned sel,
                            int lane, u64* ctl, int* out, u64 cap,
                            const int* __restrict__ images, int weight) {
    int cnt = __popc(sel);
    if (cnt == 0) return;
    u64 base = reserve_rows(ctl, (u64)cnt * weight, cap, lane);
    if (base == NO_LIMIT) return;
    int last = n - 1;
    int c = 0;
    if ((sel >> lane) & 1) c = __ldg(G.nbr + S.loff[last] + S.lpos[last] + lane);
    if (weight == 1) {
        if ((sel >> lane) & 1) {
            // Only this lane's copy of m[last] changes; no later window reads it.
            S.m[last] = c;
            int* row = out + (base + (u64)__popc(sel & lanemask_lt(lane))) * (u64)n;
            for (int x = 0; x < n; ++x) row[x] = __ldg(G.orig + S.m[P[SP_POS + x]]);
        }
        return;
    }
    u64 at = base;
    for (unsigned rest = sel; rest; rest &= rest - 1u, at += (u64)weight) {
        int cl = __shfl_sync(FULL_MASK, c, __ffs(rest) - 1);
        write_images(P, G, S, n, last, cl, images, weight, out + at * (u64)n, lane);
    }
}

// Every match of the plan with its start edge on (a, b); returns how many there are (in
// MODE_EMIT: how many were seen before it stopped at rank `hi`). MODE_EMIT writes those of
// rank in [lo, hi). win >= 0: only the matches whose step 2 is in window `win` of level 2's
// scanned list (one unit of the start, static_units).
template <int MODE>
__device__ u128 extend(const int* P, const Csr& G, Search& S, int n, int a, int b, int win,
                      u64 lo, u64 hi, int lane, u64* ctl, int* out, u64 cap, const int* images,
                      int weight) {
    set_vertex(G, S, 0, a);
    set_vertex(G, S, 1, b);
    if (n == 2) {  // the edge is the match
        if (MODE == MODE_EMIT && lo == 0 && hi > 0) {
            u64 base = reserve_rows(ctl, (u64)weight, cap, lane);
            if (base != NO_LIMIT)
                write_images(P, G, S, 2, -1, 0, images, weight, out + base * 2, lane);
        }
        return 1;
    }
    const int tail = MODE == MODE_EMIT ? n : P[SP_TAIL];
    bool over = false;  // a count passed 2^128 - 1 (the same in every lane)
    if (tail == 2) {
        u128 c = tail_product(P, G, S, 2, n, lane, &over);
        if (over && lane == 0) atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
        return c;
    }
    u128 seen = 0;  // matches so far, in the start's fixed order: the next one's rank
    int i = 2;
    open_level(P, G, S, 2, lane, win < 0 ? 0 : 32 * win);
    const int stop2 = win < 0 ? 0x7fffffff : 32 * (win + 1);  // level 2 ends there
    while (i >= 2) {
        unsigned mask = S.lmask[i];
        if (mask == 0) {  // window exhausted: next window, or back up
            S.lpos[i] += 32;
            if (S.lpos[i] >= S.llen[i] || (i == 2 && S.lpos[i] >= stop2)) { --i; continue; }
            S.lmask[i] = eval_window(P, G, S, i, lane);
            continue;
        }
        if (i == n - 1) {  // last level: every candidate is a match
            if (MODE == MODE_EMIT) {
                u64 r = (u64)seen + (u64)__popc(mask & lanemask_lt(lane));
                bool mine = ((mask >> lane) & 1) && r >= lo && r < hi;
                emit_window(P, G, S, n, __ballot_sync(FULL_MASK, mine), lane, ctl, out, cap,
                            images, weight);
            }
            seen += (u64)__popc(mask);
            if (MODE == MODE_EMIT && seen >= hi) return seen;
            S.lmask[i] = 0u;
            continue;
        }
        if (MODE != MODE_EMIT && i == n - 2 && tail == n) {  // the window's last level at once
            seen += count_last_pairs(P, G, S, n, mask, lane);
            S.lmask[i] = 0u;
            continue;
        }
        int j = __ffs(mask) - 1;
        S.lmask[i] = mask & (mask - 1u);
        set_vertex(G, S, i, __ldg(G.nbr + S.loff[i] + S.lpos[i] + j));
        if (i + 1 == tail) {
            u128 c = tail_product(P, G, S, tail, n, lane, &over);
            over |= seen + c < seen;
            seen += c;
            continue;
        }
        ++i;
        open_level(P, G, S, i, lane, 0);
    }
    if (over && lane == 0) atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
    return seen;
}

// Every block's copy of the plan, with the id run of each step's label (vlab is sorted).
__device__ void load_plan(int* P, const int* __restrict__ plan, const int* __restrict__ vlab,
                          int nv) {
    for (int k = threadIdx.x; k < SP_INTS; k += blockDim.x) P[k] = plan[k];
    __syncthreads();
    if (threadIdx.x < P[SP_N]) {
        int i = threadIdx.x, want = P[SP_VLABEL + i];
        P[SP_IDLO + i] = want == ANY ? 0 : label_bound(vlab, nv, want, false);
        P[SP_IDHI + i] = want == ANY ? nv : label_bound(vlab, nv, want, true);
    }
    __syncthreads();
}

// The first k in [0, len) with cum[k] > u (cum ascending).
__device__ __forceinline__ i64 upper_bound64(const u64* __restrict__ cum, i64 len, u64 u) {
    i64 lo = 0, hi = len;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (__ldg(cum + mid) <= u) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// The warp loop shared by the three kernels: claim work, search from it. MODE_STARTS and
// MODE_EMIT claim start edges [t0 + base, + take) of [t0, t1), check them one per lane and
// search from each valid one in turn. MODE_COUNT claims units instead (static_units): unit
// u belongs to the start t0 + k, the first k with units[k] > u (units holds the inclusive
// prefix sum of each start's units), and is window u - units[k - 1] of its level 2; so the
// starts of hubs, whose level 2 has many windows, are spread over many warps.
template <int MODE, bool FLAT4 = false>
__device__ void run_starts(const i64* __restrict__ off, const int* __restrict__ nbr,
                           const int* __restrict__ elab, const int* __restrict__ vlab,
                           const i64* __restrict__ ext, const int* __restrict__ orig, int nv,
                           const int* __restrict__ plan,
                           const int* __restrict__ images, int weight, i64 t0, i64 t1, u64 skip_first, u64 take_last, u64* ctl,
                           u64* per_start, int* out, u64 cap) {
    __shared__ int P[SP_INTS];
    load_plan(P, plan, vlab, nv);
    Csr G;
    G.off = off; G.nbr = nbr; G.elab = elab; G.vlab = vlab; G.ext = ext; G.orig = orig;
    G.nv = nv;
    const int lane = threadIdx.x & 31;
    const int n = P[SP_N];
    const i64 nstarts = t1 - t0;
    const u64* units = per_start;  // MODE_COUNT
    const i64 nitems = MODE != MODE_COUNT ? nstarts
                       : nstarts > 0 ? (i64)__ldg(units + nstarts - 1) : 0;
    const i64 nwarps = (i64)gridDim.x * (blockDim.x >> 5);
    Search S;
    u128 mine = 0;
    while (true) {
        i64 base = 0;
        int take = 0;
        if (lane == 0) {
            // Guided claims: a quarter of the remaining items per warp, 1..CLAIM_MAX; the
            // counter read is a hint, the atomicAdd decides.
            i64 left = nitems - (i64)(*(volatile u64*)(ctl + CTL_CLAIM));
            i64 c = left / (4 * nwarps);
            take = (int)(c < 1 ? 1 : (c > CLAIM_MAX ? CLAIM_MAX : c));
            base = (i64)atomicAdd(ctl + CTL_CLAIM, (u64)take);
        }
        base = __shfl_sync(FULL_MASK, base, 0);
        take = __shfl_sync(FULL_MASK, take, 0);
        if (base >= nitems) break;
        const int cnt = (int)(nitems - base < (i64)take ? nitems - base : (i64)take);
        int a = 0, b = 0, win = -1;
        i64 t = t0 + base + lane;
        bool ok = lane < cnt;
        if (ok && MODE == MODE_COUNT) {  // a unit: its start (valid by construction), window
            i64 k = upper_bound64(units, nstarts, (u64)(base + lane));
            win = (int)((u64)(base + lane) - (k > 0 ? __ldg(units + k - 1) : 0ULL));
            t = t0 + k;
            a = row_of(off, nv, t);
            b = __ldg(nbr + t);
        } else if (ok) {
            a = row_of(off, nv, t);
            b = __ldg(nbr + t);
            ok = start_ok(P, G, a, b, __ldg(elab + t));
        }
        if (MODE == MODE_STARTS && lane < cnt && !ok) per_start[base + lane] = 0ULL;
        if (MODE == MODE_COUNT && P[SP_TAIL] == n && (n == 3 || (FLAT4 && n == 4))) {
            // A unit is one window of level 2: the claim's units walked together (with a
            // 4th step, each round's level-2 candidates go on together to their last level;
            // static_count4 only, whose registers that costs).
            int len = 0;
            if (ok) {
                set_vertex(G, S, 0, a);
                set_vertex(G, S, 1, b);
                scan_range(P, G, S, 2);
                len = max(0, min(32, S.llen[2] - 32 * win));
                S.loff[2] += 32 * win;
            }
            u64 c;
            if constexpr (FLAT4) c = walk_scans<2, true>(P, G, S, 2, len, lane);
            else c = walk_scans<2, false>(P, G, S, 2, len, lane);
            if (mine + c < mine && lane == 0) atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
            mine += c;
            continue;
        }
        unsigned todo = __ballot_sync(FULL_MASK, ok);
        while (todo) {
            int l = __ffs(todo) - 1;
            todo &= todo - 1u;
            int sa = __shfl_sync(FULL_MASK, a, l), sb = __shfl_sync(FULL_MASK, b, l);
            int sw = __shfl_sync(FULL_MASK, win, l);
            i64 st = __shfl_sync(FULL_MASK, t, l);
            u64 lo = (MODE == MODE_EMIT && st == t0) ? skip_first : 0ULL;
            u64 hi = (MODE == MODE_EMIT && st == t1 - 1) ? take_last : NO_LIMIT;
            u128 c = extend<MODE>(P, G, S, n, sa, sb, sw, lo, hi, lane, ctl, out, cap, images,
                                  weight);
            if (MODE == MODE_STARTS && lane == 0) {
                per_start[base + l] = (u64)c;
                if (c >> 64) atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
            }
            if (mine + c < mine && lane == 0) atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
            mine += c;
        }
    }
    if (MODE == MODE_COUNT && lane == 0 && mine) {  // a 128-bit add: low word, then carry
        u64 lo = (u64)mine, hi = (u64)(mine >> 64);
        u64 before = atomicAdd(ctl + CTL_TOTAL, lo);
        hi += before + lo < before;
        if (hi && atomicAdd(ctl + CTL_TOTAL_HI, hi) + hi < hi)
            atomicOr(ctl + CTL_ERROR, ERR_COUNT_OVERFLOW);
    }
}

#define MATCH_ARGS                                                                           \
    const i64 *__restrict__ off, const int *__restrict__ nbr, const int *__restrict__ elab,  \
        const int *__restrict__ vlab, const i64 *__restrict__ ext,                           \
        const int *__restrict__ orig, int nv,                                                \
        const int *__restrict__ plan, const int *__restrict__ images, int weight, i64 t0,     \
        i64 t1, u64 skip_first, u64 take_last, u64 *ctl, u64 *per_start, int *out, u64 cap
#define MATCH_PASS off, nbr, elab, vlab, ext, orig, nv, plan, images, weight, t0, t1, skip_first, \
                   take_last, ctl, per_start, out, cap

// The units of each start edge t of [t0, t1) into per_start[t - t0]: 0 for a start the plan
// cannot take, 1 for one whose matches are not walked past level 1 (n = 2, or a tail from
// step 2), else the windows of its level 2's scanned list (none when that is empty). One
// thread a start.
extern "C" __global__ void __launch_bounds__(THREADS) static_units(MATCH_ARGS) {
    __shared__ int P[SP_INTS];
    load_plan(P, plan, vlab, nv);
    Csr G;
    G.off = off; G.nbr = nbr; G.elab = elab; G.vlab = vlab; G.ext = ext; G.orig = orig;
    G.nv = nv;
    const int n = P[SP_N];
    Search S;
    for (i64 k = blockIdx.x * (i64)blockDim.x + threadIdx.x; k < t1 - t0;
         k += (i64)gridDim.x * blockDim.x) {
        i64 t = t0 + k;
        int a = row_of(off, nv, t), b = __ldg(nbr + t);
        u64 units = 0;
        if (start_ok(P, G, a, b, __ldg(elab + t))) {
            if (n == 2 || P[SP_TAIL] == 2) {
                units = 1;
            } else {
                set_vertex(G, S, 0, a);
                set_vertex(G, S, 1, b);
                scan_range(P, G, S, 2);
                units = (u64)((S.llen[2] + 31) / 32);
            }
        }
        per_start[k] = units;
    }
}

// Matches from start edges [t0, t1) (entries of nbr): the total into ctl[CTL_TOTAL].
// per_start: the inclusive prefix sum of static_units' output for the same [t0, t1).
extern "C" __global__ void COUNT_BOUNDS static_count(MATCH_ARGS) {
    run_starts<MODE_COUNT>(MATCH_PASS);
}

// static_count for 4-vertex patterns counted to their last step (SP_TAIL = 4): a claim's
// units, their level-2 candidates and those candidates' last levels walked together. Its own
// kernel because that path takes more registers than static_count's 48 (capped by
// COUNT4_MIN_BLOCKS: the 20M Chung-Lu clique4 took 48.0 ms with ptxas' own 103 registers,
// 36.9 ms at 3 blocks an SM, bench/results/static/units4-1127/; 31.5 ms at 4, 32.0-32.3 at 5
// and 32.8-33.3 at 6, the other search rows of citeseer, oracle-github and enron level
// between 3 and 4, bench/results/static/session19/).
extern "C" __global__ void __launch_bounds__(THREADS, COUNT4_MIN_BLOCKS) static_count4(MATCH_ARGS) {
    run_starts<MODE_COUNT, true>(MATCH_PASS);
}

// Matches of each start edge t of [t0, t1) into per_start[t - t0].
extern "C" __global__ void COUNT_BOUNDS static_count_starts(MATCH_ARGS) {
    run_starts<MODE_STARTS>(MATCH_PASS);
}

// Match rows of start edges [t0, t1) within the rank windows (header) into out[cap, n]
// (`weight` rows a found match).
extern "C" __global__ void __launch_bounds__(THREADS) static_emit(MATCH_ARGS) {
    run_starts<MODE_EMIT>(MATCH_PASS);
}

// ---------------------------------------------------------------------------------------
// The inclusive prefix sum of static_units' output, in place (static_count's per_start).
// cupy.cumsum, used before, waited until the persistent kernel exited, so a count could not
// run beside it (bench/debug/static_beside_kernel.py). Three launches on one grid of g
// blocks, block b owning the contiguous chunk b of ceil(n / g) entries:
//   units_chunk_sums(a, n, sums)       sums[b] = the sum of chunk b;
//   units_scan(sums, g, sums) on 1 block: sums made inclusive in place;
//   units_scan(a, n, sums) on g blocks: chunk b scanned in tiles of THREADS entries, from
//                                      sums[b - 1] (0 for b = 0).
//   sums   u64[g]   host allocates; written by the first launch, rewritten by the second,
//                   read by the third.

// v's inclusive prefix sum over the block's threads; *total: the block's sum (every thread).
__device__ u64 block_inclusive(u64 v, u64* total) {
    __shared__ u64 warp_sum[THREADS / 32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int d = 1; d < 32; d <<= 1) {
        u64 o = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += o;
    }
    if (lane == 31) warp_sum[w] = v;
    __syncthreads();
    if (w == 0) {
        u64 x = lane < THREADS / 32 ? warp_sum[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            u64 o = __shfl_up_sync(FULL_MASK, x, d);
            if (lane >= d) x += o;
        }
        if (lane < THREADS / 32) warp_sum[lane] = x;
    }
    __syncthreads();
    if (w > 0) v += warp_sum[w - 1];
    *total = warp_sum[THREADS / 32 - 1];
    __syncthreads();  // warp_sum is reused by the next call
    return v;
}

// This block's chunk [*lo, *hi) of n entries.
__device__ __forceinline__ void scan_chunk(i64 n, i64* lo, i64* hi) {
    i64 per = (n + gridDim.x - 1) / gridDim.x;
    *lo = min(n, (i64)blockIdx.x * per);
    *hi = min(n, *lo + per);
}

extern "C" __global__ void __launch_bounds__(THREADS)
units_chunk_sums(const u64* __restrict__ a, i64 n, u64* __restrict__ sums) {
    i64 lo, hi;
    scan_chunk(n, &lo, &hi);
    u64 s = 0, total;
    for (i64 k = lo + threadIdx.x; k < hi; k += THREADS) s += a[k];
    block_inclusive(s, &total);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void __launch_bounds__(THREADS) units_scan(u64* a, i64 n, const u64* sums) {
    i64 lo, hi;
    scan_chunk(n, &lo, &hi);
    u64 carry = blockIdx.x ? sums[blockIdx.x - 1] : 0, total;
    for (i64 k0 = lo; k0 < hi; k0 += THREADS) {
        i64 k = k0 + threadIdx.x;
        u64 v = block_inclusive(k < hi ? a[k] : 0, &total);
        if (k < hi) a[k] = carry + v;
        carry += total;
    }
}

// ---------------------------------------------------------------------------------------
// CSR snapshot from undirected edges (csr_from_edges). The vertices are numbered by label
// and degree first: vkey[x] = degree << 32 | x (csr_vertex_init, csr_degrees), sorted
// (cupy.argsort); then vkey[x] = label << 31 | (x's place in that order) (csr_label_keys),
// sorted again; rank[vorder[r]] = r (csr_relabel). Then both half edges, in ranks, as keys
// src * nv + dst, sorted (cupy.argsort), then split into rows.

extern "C" __global__ void csr_vertex_init(i64* __restrict__ vkey, int nv) {
    for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x < nv;
         x += (i64)gridDim.x * blockDim.x)
        vkey[x] = x;
}

__device__ __forceinline__ bool edge_ok(i64 a, i64 b, int nv, u64* ctl) {
    if (0 <= a && a < b && b < (i64)nv) return true;
    atomicOr(ctl + CTL_ERROR, ERR_BAD_EDGE);
    return false;
}

template <typename I>
__device__ void degrees_of(const I* __restrict__ lo, const I* __restrict__ hi, i64 ne, int nv,
                           u64* __restrict__ vkey, u64* ctl) {
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < ne;
         e += (i64)gridDim.x * blockDim.x) {
        i64 a = (i64)lo[e], b = (i64)hi[e];
        if (!edge_ok(a, b, nv, ctl)) continue;
        atomicAdd(vkey + a, 1ULL << 32);
        atomicAdd(vkey + b, 1ULL << 32);
    }
}

extern "C" __global__ void csr_degrees_i32(const int* lo, const int* hi, i64 ne, int nv,
                                           u64* vkey, u64* ctl) {
    degrees_of<int>(lo, hi, ne, nv, vkey, ctl);
}

extern "C" __global__ void csr_degrees_i64(const i64* lo, const i64* hi, i64 ne, int nv,
                                           u64* vkey, u64* ctl) {
    degrees_of<i64>(lo, hi, ne, nv, vkey, ctl);
}

// vkey[x] = x's label (as unsigned, so that signed order is kept) << 31 | its place r in the
// degree order (vorder[r] = x).
extern "C" __global__ void csr_label_keys(const i64* __restrict__ vorder, int nv,
                                          const int* __restrict__ vlab, u64* __restrict__ vkey) {
    for (i64 r = blockIdx.x * (i64)blockDim.x + threadIdx.x; r < nv;
         r += (i64)gridDim.x * blockDim.x) {
        int x = (int)vorder[r];
        vkey[x] = ((u64)((unsigned)vlab[x] ^ 0x80000000u) << 31) | (u64)r;
    }
}

// Vertex r of the snapshot is the caller's vorder[r]: its rank, id, label and external id.
extern "C" __global__ void csr_relabel(const i64* __restrict__ vorder, int nv,
                                       const int* __restrict__ vlab, const i64* __restrict__ ext,
                                       int* __restrict__ rank, int* __restrict__ orig,
                                       int* __restrict__ vlab_out, i64* __restrict__ ext_out) {
    for (i64 r = blockIdx.x * (i64)blockDim.x + threadIdx.x; r < nv;
         r += (i64)gridDim.x * blockDim.x) {
        int x = (int)vorder[r];
        rank[x] = (int)r;
        orig[r] = x;
        vlab_out[r] = vlab[x];
        ext_out[r] = ext[x];
    }
}

template <typename I>
__device__ void keys_of(const I* __restrict__ lo, const I* __restrict__ hi, i64 ne, int nv,
                        const int* __restrict__ rank, i64* __restrict__ keys, u64* ctl) {
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < ne;
         e += (i64)gridDim.x * blockDim.x) {
        i64 a = (i64)lo[e], b = (i64)hi[e];
        if (edge_ok(a, b, nv, ctl)) {
            a = rank[a];
            b = rank[b];
        } else {
            a = 0; b = 0;
        }
        keys[e] = a * nv + b;
        keys[ne + e] = b * nv + a;
    }
}

extern "C" __global__ void csr_keys_i32(const int* lo, const int* hi, i64 ne, int nv,
                                        const int* rank, i64* keys, u64* ctl) {
    keys_of<int>(lo, hi, ne, nv, rank, keys, ctl);
}

extern "C" __global__ void csr_keys_i64(const i64* lo, const i64* hi, i64 ne, int nv,
                                        const int* rank, i64* keys, u64* ctl) {
    keys_of<i64>(lo, hi, ne, nv, rank, keys, ctl);
}

// Sorted half edge k (= keys[order[k]]): neighbour, label, row. Flags a repeated edge.
extern "C" __global__ void csr_gather(const i64* __restrict__ keys, const i64* __restrict__ order,
                                      const int* __restrict__ lab, i64 ne, int nv,
                                      int* __restrict__ nbr, int* __restrict__ elab,
                                      int* __restrict__ row, u64* ctl) {
    for (i64 k = blockIdx.x * (i64)blockDim.x + threadIdx.x; k < 2 * ne;
         k += (i64)gridDim.x * blockDim.x) {
        i64 e = order[k];
        i64 key = keys[e];
        i64 r = key / nv;
        nbr[k] = (int)(key - r * nv);
        row[k] = (int)r;
        elab[k] = lab[e < ne ? e : e - ne];
        if (k > 0 && keys[order[k - 1]] == key) atomicOr(ctl + CTL_ERROR, ERR_DUPLICATE);
    }
}

// The smallest and largest edge label: span[0] = the largest of (unsigned)(lab ^ 2^31),
// span[1] = the largest of its complement (both zeroed by the host first).
extern "C" __global__ void csr_label_span(const int* __restrict__ lab, i64 ne,
                                          unsigned* __restrict__ span) {
    unsigned hi = 0u, lo = 0u;
    for (i64 e = blockIdx.x * (i64)blockDim.x + threadIdx.x; e < ne;
         e += (i64)gridDim.x * blockDim.x) {
        unsigned v = (unsigned)lab[e] ^ 0x80000000u;
        hi = max(hi, v);
        lo = max(lo, ~v);
    }
    hi = __reduce_max_sync(FULL_MASK, hi);
    lo = __reduce_max_sync(FULL_MASK, lo);
    if ((threadIdx.x & 31) == 0) {
        atomicMax(span, hi);
        atomicMax(span + 1, lo);
    }
}

// off[x] = first sorted half edge of row >= x, for x in [0, nv] (so off[nv] = 2 * ne).
extern "C" __global__ void csr_offsets(const int* __restrict__ row, i64 m, int nv,
                                       i64* __restrict__ off) {
    for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x <= nv;
         x += (i64)gridDim.x * blockDim.x) {
        i64 lo = 0, hi = m;
        while (lo < hi) {
            i64 mid = (lo + hi) >> 1;
            if ((i64)row[mid] < x) lo = mid + 1; else hi = mid;
        }
        off[x] = lo;
    }
}
