// ring_count.cuh -- counting rings without a search: triangles, tailed triangles and
// diamonds of one vertex label (ring_pairs), and 4-cycles of one label or of two labels
// taking turns (wedge_roots). The device side of dcsm/engine/short_cycles.py and
// diamond_count.py, whose docstrings give the methods; those are the semantics and the
// host oracle. Included at the end of label_count.cu (the loader splices it in), whose
// helpers, rows and claims it uses.
//
// Each subgraph is counted once, from its root: a ring's highest-ranked vertex, a tailed
// triangle's triangle's, a diamond's chord's higher end. Ranks are label_count.cu's
// (label_ranks): with one label, a vertex's rank is its place in its label's run, which
// the snapshot orders by degree, then id (a wildcard label takes every vertex, in id
// order: label, then degree; exact, as any order is, but a high label's roots walk more).
// Rows are label_count.cu's step rows, ranks in rank order: one step (the label to
// itself, the edge label) for one label, two (A to B, B to A) for labels taking turns.
//
// ring_pairs: a warp takes 32 row entries at a time, a lane one; each entry (r, u) with
// u < r (an edge from the root r to a lower rank) is walked by its lane, or by the whole
// warp when both rows are long, the shorter of the two rows searched in the other (binary
// search, rows sorted):
//   triangle: r's and u's entries below u in common: one triangle each (w < u < r);
//   tailed:   each such w adds the pendants the triangle's three vertices can take
//             (their row lengths less 2 each);
//   diamond:  t = r's and u's whole rows in common (the apexes over the chord r - u),
//             C(t, 2) diamonds.
// Work is spread by entries, so a hub's row is shared by many warps, and nothing but the
// rows is read (no scratch). With one label over every vertex and any edge (or the one
// label every edge carries), the rows are the snapshot's own (gpu/label_count.py).
//
// wedge_roots: a block takes one root r at a time (label_count.cu's claims: ranks highest
// first, the hubs one a claim), steps from r to every u below it (first step), then from
// each u to every w below r (second step), and adds one wedge into cnt[w]; the 4-cycles
// through r and w (w opposite r) number C(cnt[w], 2). Each w reached first is appended to
// touched, which then resets cnt (work proportional to the root's rows).
//
// Buffers (device memory; gpu/label_count.py allocates all of them on the matcher's stream):
//   roff, rnbr  label_count.cu's step rows (roff i64 offsets, rnbr int32 ranks); read only.
//   pos_of      int32[compact]: a rank's place in the runs (label_ranks); wedge_roots reads.
//   runs        i64[2 * (k + 1)]: the runs (label_count.cu's layout); wedge_roots reads.
//   steps       i64[k, 2]: step j (from run j's label to the next run's) as (row_base,
//               src_base); host uploads; wedge_roots reads.
//   cnt         u32[blocks, compact]: wedge_roots' wedge counts, block b's from b * compact;
//               host zeroes it once, each block returns its part to zero after every root.
//   touched     int32[blocks, compact]: the ranks block b reached for its current root.
//   ctl         u64[4]: label_count.cu's [claim, total, total_hi, error]; both kernels add
//               their subgraphs into the 128-bit total (the host multiplies by the
//               automorphisms), wedge_roots claims ranks.

#define RING_TRIANGLE 0
#define RING_TAILED 1
#define RING_DIAMOND 2

// Pairs whose shorter row is longer than this are walked by the whole warp, the rest by
// their own lane.
#ifndef RING_LONG
#define RING_LONG 64
#endif

// The entries of rnbr[lo, hi) (ascending, no repeats) also in rnbr[b0, b1), taken by lane
// `first` on, `step` apart (one lane: 0, 1; the warp: its lane, 32): their count, or with
// `tail` the pendants of the triangles (r, u, w) they close (dr_du: the row lengths of r
// and u; w's from roff). A lane alone moves its lower bound on as it goes.
__device__ __forceinline__ u64 common(const int* rnbr, i64 lo, i64 hi, i64 b0, i64 b1,
                                      const i64* roff, bool tail, i64 dr_du, int first,
                                      int step) {
    u64 mine = 0;
    for (i64 q = lo + first; q < hi; q += step) {
        const int w = rnbr[q];
        const i64 at = lower_bound(rnbr, b0, b1, w);
        if (at < b1 && rnbr[at] == w) mine += tail ? (u64)(dr_du + roff[w + 1] - roff[w] - 6) : 1ull;
        if (step == 1) b0 = at;
    }
    return mine;
}

// Rows a and b of a pair (r, u): for a triangle or a tailed triangle, their entries below
// u (r's come before e, where u sits in it; u's are cut by a search); for a diamond, the
// whole rows. The shorter one first.
struct PairRows {
    i64 lo, hi, b0, b1, dr_du;
};

__device__ __forceinline__ PairRows pair_rows(const i64* roff, const int* rnbr, int r, int u,
                                              i64 e, int mode) {
    const i64 ra = roff[r], ua = roff[u], rb = roff[r + 1], ub = roff[u + 1];
    const i64 r_end = mode == RING_DIAMOND ? rb : e;
    const i64 u_end = mode == RING_DIAMOND ? ub : lower_bound(rnbr, ua, ub, u);
    const i64 dr_du = (rb - ra) + (ub - ua);
    if (u_end - ua <= r_end - ra) return PairRows{ua, u_end, ra, r_end, dr_du};
    return PairRows{ra, r_end, ua, u_end, dr_du};
}

// Subgraphs rooted at ranks [r0, r1) of one label's rows (row r: roff[r] .. roff[r + 1]),
// mode RING_TRIANGLE, RING_TAILED or RING_DIAMOND, added into ctl's total. A warp takes 32
// entries at a time, a lane one entry (r, u); each pair with u < r is walked by its own
// lane, or, when both its rows are longer than RING_LONG, by the whole warp after the
// others.
extern "C" __global__ void LC_BOUNDS ring_pairs(const i64* roff, const int* rnbr, int r0,
                                                int r1, int mode, u64* ctl) {
    const int lane = threadIdx.x & 31;
    const i64 e1 = roff[r1];
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    const bool tail = mode == RING_TAILED;
    u128 mine = 0;
    for (i64 c = roff[r0] + ((blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5) * 32; c < e1;
         c += warps * 32) {
        const i64 e = c + lane;
        int r = 0, u = 0;
        bool ok = e < e1;
        if (ok) {
            r = (int)(lower_bound(roff, (i64)r0, (i64)r1 + 1, e + 1) - 1);  // the row holding e
            u = rnbr[e];
            ok = u < r;
        }
        PairRows p{0, 0, 0, 0, 0};
        if (ok) p = pair_rows(roff, rnbr, r, u, e, mode);
        const bool long_pair = ok && p.hi - p.lo > RING_LONG;
        if (ok && !long_pair) {
            const u64 t = common(rnbr, p.lo, p.hi, p.b0, p.b1, roff, tail, p.dr_du, 0, 1);
            mine += mode == RING_DIAMOND ? (t > 1 ? t * (t - 1) / 2 : 0) : t;
        }
        for (unsigned todo = __ballot_sync(0xffffffffu, long_pair); todo; todo &= todo - 1) {
            const int l = __ffs(todo) - 1;
            const i64 lo = __shfl_sync(0xffffffffu, p.lo, l), hi = __shfl_sync(0xffffffffu, p.hi, l);
            const i64 b0 = __shfl_sync(0xffffffffu, p.b0, l), b1 = __shfl_sync(0xffffffffu, p.b1, l);
            const i64 dr_du = __shfl_sync(0xffffffffu, p.dr_du, l);
            const u64 t = common(rnbr, lo, hi, b0, b1, roff, tail, dr_du, lane, 32);
            if (mode != RING_DIAMOND) {
                mine += t;
                continue;
            }
            const u64 all = __reduce_add_sync(0xffffffffu, (unsigned)t);
            if (lane == 0 && all > 1) mine += all * (all - 1) / 2;
        }
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// 4-cycles whose highest-ranked vertex has an id in [x0, x1), added into ctl's total: k
// runs (1: one label; 2: labels taking turns), a root of run j taking step j, then step
// (j + 1) % k; block b uses cnt and touched from b * compact on.
extern "C" __global__ void LC_BOUNDS wedge_roots(const i64* roff, const int* rnbr,
                                                 const int* pos_of, const i64* runs, int k,
                                                 const i64* steps, int x0, int x1,
                                                 unsigned* cnt_all, int* touched_all,
                                                 u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    __shared__ int s_root, s_walk, s_tail;
    __shared__ Claims q;
    if (threadIdx.x < k) st[threadIdx.x] = Step{steps[2 * threadIdx.x], steps[2 * threadIdx.x + 1]};
    if (threadIdx.x < 2 * (k + 1)) run[threadIdx.x] = runs[threadIdx.x];
    if (threadIdx.x == 0) s_tail = q.n = q.at = 0;
    __syncthreads();
    const i64 compact = run[2 * k + 1];
    unsigned* cnt = cnt_all + blockIdx.x * compact;
    int* touched = touched_all + blockIdx.x * compact;
    u128 mine = 0;
    for (;;) {
        if (threadIdx.x < 32) {  // warp 0: the next root with two neighbours below it
            int w = 0;
            const int got = next_root(ctl, compact, q, [&](int r, int* wl) {
                const int p = pos_of[r];
                *wl = run_of(run, k, p);
                const i64 x = run[2 * *wl] + (p - run[2 * *wl + 1]);
                const i64* row = row_of(roff, st[*wl], p);
                return x >= x0 && x < x1 && row[1] - row[0] >= 2 && rnbr[row[0] + 1] < r;
            }, &w);
            if (threadIdx.x == 0) {
                s_root = got;
                s_walk = w;
            }
        }
        __syncthreads();
        const int r = s_root;
        if (r < 0) break;
        const Step& first = st[s_walk];
        const Step& second = st[(s_walk + 1) % k];
        const i64* row = row_of(roff, first, pos_of[r]);
        const i64 a = row[0], n = lower_bound(rnbr, a, row[1], r) - a;  // the u below r
        const bool block_wide = n < WARPS;  // few u: the block walks one u's row at a time
        const int lane = block_wide ? threadIdx.x : (threadIdx.x & 31);
        const int width = block_wide ? THREADS : 32;
        for (i64 i = block_wide ? 0 : (threadIdx.x >> 5); i < n; i += block_wide ? 1 : WARPS) {
            const i64* urow = row_of(roff, second, pos_of[rnbr[a + i]]);
            for (i64 j = urow[0] + lane; j < urow[1]; j += width) {
                const int w = rnbr[j];
                if (w >= r) break;
                if (atomicAdd(&cnt[w], 1u) == 0) touched[atomicAdd(&s_tail, 1)] = w;
            }
        }
        __syncthreads();
        const int used = s_tail;
        for (int i = threadIdx.x; i < used; i += THREADS) {
            const u64 c = cnt[touched[i]];
            mine += (u128)(c * (c - 1) / 2);
            cnt[touched[i]] = 0;
        }
        __syncthreads();  // every thread has read s_tail and reset its share
        if (threadIdx.x == 0) s_tail = 0;
        // the next claim's __syncthreads publishes s_tail = 0 before any wedge adds to it
    }
    mine = warp_sum(mine);
    if ((threadIdx.x & 31) == 0) add_total(ctl, mine);
}
