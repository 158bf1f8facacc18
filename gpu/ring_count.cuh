// ring_count.cuh -- counting rings without a search: diamonds of one vertex label
// (diamond_triangles and edge_pairs over the whole graph, diamond_pairs over a slice),
// tailed triangles of one label (tailed_pairs), and 4-cycles of one label or of two labels
// taking turns (hub_items, wedge_hubs, wedge_small, wedge_parts). The device side of
// dcsm/engine/diamond_count.py and short_cycles.py, whose docstrings give the methods;
// those are the semantics and the host oracle. Included at the end of label_count.cu (the
// loader splices it in), whose helpers, rows and claims it uses. Triangles stay with the
// search, which counts them faster (bench/results/static/rings-1128/: 20M edges, 7.2 ms
// against 86 ms by marks from each root); a tailed triangle took 95 ms by those marks here
// and 90 ms by the search, and tailed_pairs walks only the higher ranks' parts of two rows
// (bench/results/static/session19/).
//
// Each subgraph is counted once, from its root: a 4-cycle's highest-ranked vertex, a
// diamond's chord's higher end, a tailed triangle's triangle's lowest-ranked vertex. Ranks
// are label_count.cu's (label_ranks): with one label, a vertex's rank is its place in its
// label's run, which the snapshot orders by degree, then id (a wildcard label takes every
// vertex, in id order: label, then degree; exact, as any order is, but a high label's
// roots walk more). Rows are label_count.cu's step rows, ranks in rank order: one step (the
// label to itself, the edge label) for one label, two (A to B, B to A) for labels taking
// turns. With one label over every vertex and any edge (or the one label every edge
// carries), the rows are the snapshot's own (gpu/label_count.py).
//
// Diamonds: a chord with t triangles on it is the chord of C(t, 2) diamonds. Over the whole
// graph, diamond_triangles finds each triangle once, from its lowest rank (as tailed_pairs
// does), and adds 1 to each of its three edges' counters; edge_pairs sums C(t, 2) (20M
// edges: bench/results/static/session20/). A slice's diamonds (chords whose higher end is
// in it, their triangles anywhere) are diamond_pairs': a warp takes 32 row entries at a
// time, a lane one; for each entry (r, u) with u < r (the chord from the root r to a lower
// rank), the entries of the shorter of the two rows are searched in the other (binary
// search, rows sorted), the warp's lanes taking the pairs' entries in turn: t common
// entries (the apexes), C(t, 2) diamonds.
//
// 4-cycles: a root r steps to every u below it (first step), then from each u to every w
// below r (second step), one wedge r - u - w each; the 4-cycles through r and w (w
// opposite r) number C(c, 2) for the c wedges reaching w. Who counts a root's wedges
// depends on its rank (bench/debug/wedge_root_sizes.py: the top 970 roots of a 20M-edge
// Chung-Lu graph hold 72 % of its 1.38G wedges, the top 4,000 86 %):
//   wedge_hubs:  the top `hubs` ranks (as many of the top hub_roots, the candidates, as
//                the budget holds), the whole grid on a few roots at a time, a warp an
//                item of HUB_CHUNK u (hub_items counts each hub's items, a scan makes them
//                offsets), each root with a count array of its own (atomics on lines
//                that stay in L2), of 16-bit counters where its u count bounds them
//                below 2^16, else 32-bit; each wedge adds the count it found before it:
//                the pairs C(c, 2), with no list of the w reached;
//   wedge_small: the ranks below, a warp a root, counts in a table of the warp's own in
//                shared memory (open addressing: a root below the hubs reaches mostly
//                distinct w, 199M wedges to 197M w at 20M edges); a root whose w pass
//                the table's limit goes to the list bigs;
//   wedge_parts: bigs' roots, a block a root, in a table of the block's own, one part of
//                the w at a time (the w whose low lg bits are p), halving a part whose w
//                pass the table's limit.
// Both walk a round of u's rows below r as one concatenation across their lanes
// (walk_rows, walk_rows_block), so that short rows do not idle the lanes.
// (Before the tables: wedge_roots, a block a root with a count array of the block's own
// in global memory, 101 ms of the 20M 4-cycle's 162: bench/results/static/hubs16-1128/.)
//
// Buffers (device memory; gpu/label_count.py allocates all of them on the matcher's stream):
//   roff, rnbr  label_count.cu's step rows (roff i64 offsets, rnbr int32 ranks); read only.
//   pos_of      int32[compact]: a rank's place in the runs (label_ranks); the 4-cycle
//               kernels read.
//   runs        i64[2 * (k + 1)]: the runs (label_count.cu's layout); the 4-cycle kernels
//               read.
//   steps       i64[k, 2]: step j (from run j's label to the next run's) as (row_base,
//               src_base); host uploads; the 4-cycle kernels read (load_tables).
//   items       i64[candidates + 1]: hub h's items (hub_items writes their count at
//               h + 1, host zeroes items[0], the scan makes them offsets: hub h's first
//               item); wedge_hubs reads those of the hubs the host takes.
//   far         u64[1]: compact minus the first rank whose row is longer than BYTE_MAX
//               (byte_ranks; 0: none); host zeroes and reads (it passes on `bytes`).
//   slots       i64[candidates + 1]: hub h's count-array words, the same way (0: no
//               4-cycle, compact: 32-bit counters, narrow_words: narrow ones); host reads
//               them (how many hubs fit the budget), wedge_hubs and hub_rows read.
//   hub_cnt     u32[the hubs' words]: hub h's wedge counts from word slots[h] on; host
//               zeroes, wedge_hubs and hub_rows add.
//   claim       u64[2]: wedge_hubs' next item, hub_rows' next segment; host zeroes.
//   q_hub, q_lo, q_hi  int32, i64, i64[the hubs' u]: the long rows wedge_hubs queues (a
//               row's hub and its part rnbr[lo, hi)); wedge_hubs writes, hub_rows reads.
//   q_segs      i64[the hubs' u + 1]: a queued row's segments (at q + 1; host zeroes, the
//               scan makes them offsets); q_n u64[1]: the rows queued (host zeroes).
//   tcnt        u32[rows' entries]: an edge's triangles, at its entry in its lower end's
//               row; host zeroes, diamond_triangles adds, edge_pairs reads.
//   bigs        int32[top]: the ranks wedge_small passes on to wedge_parts; it writes,
//               wedge_parts reads.
//   wctl        u64[3]: [wedge_small's next 32 ranks, bigs' length, wedge_parts' next big];
//               host zeroes.
//   ctl         u64[4]: label_count.cu's [claim, total, total_hi, error]; host zeroes;
//               the kernels here add their subgraphs into the 128-bit total (the host
//               multiplies by the automorphisms).

// The warp's walk of 32 ranges rnbr[lo, hi), one a lane (empty: none), as one
// concatenation: a warp scan of their lengths gives each range's first item, and an item
// finds its range by a binary search over the 32 firsts, so a long range is shared by the
// whole warp. each(i, k, x) runs for every entry x = rnbr[k], i being its range's lane; a
// lane stops at its first false. The RowWalk arrays are the warp's own (shared memory); the walk
// starts and ends with a __syncwarp (what the caller writes before it is seen inside).
struct RowWalk {
    i64 at[32], from[32];
};

template <typename Each>
__device__ __forceinline__ void walk_rows(const int* rnbr, RowWalk& R, i64 lo, i64 hi,
                                          int lane, Each each) {
    const i64 len = hi - lo;
    i64 incl = len;
    for (int d = 1; d < 32; d <<= 1) {
        const i64 v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    const i64 total = __shfl_sync(0xffffffffu, incl, 31);
    R.at[lane] = incl - len;
    R.from[lane] = lo;
    __syncwarp();
    for (i64 j = lane; j < total; j += 32) {
        int i = 0;  // the last range whose first item is at or before j: j's range
        for (int d = 16; d; d >>= 1)
            if (R.at[i + d] <= j) i += d;
        const i64 at = R.from[i] + (j - R.at[i]);
        if (!each(i, at, rnbr[at])) break;
    }
    __syncwarp();
}

// walk_rows for the whole block: THREADS ranges, one a thread, their first items by a
// block scan, an item's range by a binary search over the THREADS firsts. Every thread
// calls it; it starts and ends with a __syncthreads.
struct BlockWalk {
    i64 at[THREADS], from[THREADS], warp[WARPS], total;
};

template <typename Each>
__device__ __forceinline__ void walk_rows_block(const int* rnbr, BlockWalk& B, i64 lo, i64 hi,
                                                Each each) {
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    const i64 len = hi - lo;
    i64 incl = len;
    for (int d = 1; d < 32; d <<= 1) {
        const i64 v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    if (lane == 31) B.warp[wid] = incl;
    __syncthreads();
    if (t < 32) {  // the warps' totals, scanned (WARPS <= 32)
        const i64 own = t < WARPS ? B.warp[t] : 0;
        i64 v = own;
        for (int d = 1; d < 32; d <<= 1) {
            const i64 o = __shfl_up_sync(0xffffffffu, v, d);
            if (lane >= d) v += o;
        }
        if (t < WARPS) B.warp[t] = v - own;
        if (t == 31) B.total = v;
    }
    __syncthreads();
    B.at[t] = B.warp[wid] + incl - len;
    B.from[t] = lo;
    __syncthreads();
    const i64 total = B.total;
    for (i64 j = t; j < total; j += THREADS) {
        int i = 0, top = THREADS - 1;  // the last range whose first item is at or before j
        while (i < top) {
            const int m = (i + top + 1) >> 1;
            if (B.at[m] <= j) i = m; else top = m - 1;
        }
        const i64 at = B.from[i] + (j - B.at[i]);
        if (!each(i, at, rnbr[at])) break;
    }
    __syncthreads();
}

// One round of a pair kernel (diamond_pairs, tailed_pairs, diamond_triangles): each lane
// holds a pair that walks rnbr[lo, hi) and searches each walked entry in rnbr[b0, b1) (an
// empty walk: no pair), the pairs' walks one concatenation (walk_rows). found(i, x, k, at)
// runs for each walked x = rnbr[k] that the search finds at rnbr[at], i being its pair's
// lane. The caller's per-pair sums must be reset before the call (its first __syncwarp
// orders them) and read after it (its last).
struct PairWalk {
    RowWalk rows;
    i64 b0[32], b1[32];
};

template <typename Found>
__device__ __forceinline__ void walk_pairs(const int* rnbr, PairWalk& P, i64 lo,
                                           i64 hi, i64 b0, i64 b1, int lane, Found found) {
    P.b0[lane] = b0;
    P.b1[lane] = b1;
    walk_rows(rnbr, P.rows, lo, hi, lane, [&](int i, i64 k, int x) {
        const i64 end = P.b1[i], at = lower_bound(rnbr, P.b0[i], end, x);
        if (at < end && rnbr[at] == x) found(i, x, k, at);
        return true;
    });
}

// Diamonds rooted at ranks [r0, r1) of one label's rows (row r: roff[r] .. roff[r + 1]),
// added into ctl's total. A pair (r, u) walks the shorter of the two whole rows, searching
// each entry in the other (walk_pairs), and each pair counts its common entries in shared
// memory.
extern "C" __global__ void LC_BOUNDS diamond_pairs(const i64* roff, const int* rnbr, int r0,
                                                   int r1, u64* ctl) {
    __shared__ PairWalk s_walk[WARPS];
    __shared__ unsigned s_t[WARPS][32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const i64 e1 = roff[r1];
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    u128 mine = 0;
    for (i64 c = roff[r0] + ((blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5) * 32; c < e1;
         c += warps * 32) {
        const i64 e = c + lane;
        i64 lo = 0, hi = 0, b0 = 0, b1 = 0;
        if (e < e1) {
            const int r = (int)(lower_bound(roff, (i64)r0, (i64)r1 + 1, e + 1) - 1);  // e's row
            const int u = rnbr[e];
            if (u < r) {
                const i64 ra = roff[r], rb = roff[r + 1], ua = roff[u], ub = roff[u + 1];
                const bool u_shorter = ub - ua <= rb - ra;
                lo = u_shorter ? ua : ra, hi = u_shorter ? ub : rb;
                b0 = u_shorter ? ra : ua, b1 = u_shorter ? rb : ub;
            }
        }
        s_t[wid][lane] = 0;
        unsigned* t_of = s_t[wid];
        walk_pairs(rnbr, s_walk[wid], lo, hi, b0, b1, lane,
                   [=](int i, int, i64, i64) { atomicAdd(&t_of[i], 1u); });
        const u64 t = s_t[wid][lane];
        if (t > 1) mine += t * (t - 1) / 2;
        __syncwarp();  // every lane is done with the arrays before the next chunk's
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// Triangles from their lowest rank (tailed_pairs, diamond_triangles): entry e of row w
// (w in [r0, r1)) with u = rnbr[e] above w is a pair (w, u); each triangle w < u < x is
// found once, by its pair (w, u), as the common entries x of the two rows' parts above u
// (row w's from e + 1, row u's from its first entry above u: one binary search). The
// shorter part is walked ([lo, hi)) and each entry searched in the other ([b0, b1))
// (walk_pairs). Those are the higher ranks' parts, short in a power-law graph whose ranks
// follow the degree: the orientation of triangle counting. An entry whose u is not above
// w holds no pair (all zero).
struct UpperPair {
    i64 lo, hi, b0, b1, deg_w, deg_u;
};

__device__ __forceinline__ UpperPair upper_pair(const i64* roff, const int* rnbr, int r0,
                                                int r1, i64 e) {
    const int w = (int)(lower_bound(roff, (i64)r0, (i64)r1 + 1, e + 1) - 1);  // e's row
    const int u = rnbr[e];
    if (u <= w) return UpperPair{0, 0, 0, 0, 0, 0};
    const i64 wa = roff[w], wb = roff[w + 1], ua = roff[u], ub = roff[u + 1];
    const i64 ux = lower_bound(rnbr, ua, ub, u + 1);  // row u above u
    const bool u_shorter = ub - ux <= wb - (e + 1);
    return u_shorter ? UpperPair{ux, ub, e + 1, wb, wb - wa, ub - ua}
                     : UpperPair{e + 1, wb, ux, ub, wb - wa, ub - ua};
}

// Tailed triangles (a triangle and one more fitting neighbour of one of its vertices)
// rooted at ranks [r0, r1) of one label's rows, added into ctl's total: each triangle
// w < u < x, found from its lowest rank w (upper_pair), weighs the fitting neighbours its
// vertices have outside it, deg(w) + deg(u) + deg(x) - 6 (a row holds exactly its vertex's
// fitting neighbours, so its length is that degree). Each pair's common entries t and the
// sum of their degrees meet in shared memory.
// The rounds of a triangle kernel (tailed_pairs, diamond_triangles): the warp takes the
// entries of rows [r0, r1) 32 at a time, each lane the pair of its entry e (upper_pair),
// and walks the pairs together (walk_pairs with found); start() runs in each lane before
// a round's walk (the lane resets its pair's sums), done(e, q) after it (it reads them).
template <typename Start, typename Found, typename Done>
__device__ __forceinline__ void triangle_rounds(const i64* roff, const int* rnbr, int r0,
                                                int r1, PairWalk& P, Start start, Found found,
                                                Done done) {
    const int lane = threadIdx.x & 31;
    const i64 e1 = roff[r1];
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 c = roff[r0] + ((blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5) * 32; c < e1;
         c += warps * 32) {
        const i64 e = c + lane;
        const UpperPair q =
            e < e1 ? upper_pair(roff, rnbr, r0, r1, e) : UpperPair{0, 0, 0, 0, 0, 0};
        start();
        walk_pairs(rnbr, P, q.lo, q.hi, q.b0, q.b1, lane, found);
        done(e, q);
        __syncwarp();  // every lane is done with the arrays before the next round's
    }
}

extern "C" __global__ void LC_BOUNDS tailed_pairs(const i64* roff, const int* rnbr, int r0,
                                                  int r1, u64* ctl) {
    __shared__ PairWalk s_walk[WARPS];
    __shared__ unsigned long long s_deg[WARPS][32];
    __shared__ unsigned s_t[WARPS][32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    unsigned* t_of = s_t[wid];
    unsigned long long* deg_of = s_deg[wid];
    u128 mine = 0;
    triangle_rounds(
        roff, rnbr, r0, r1, s_walk[wid], [&] { t_of[lane] = 0, deg_of[lane] = 0; },
        [=](int i, int x, i64, i64) {
            atomicAdd(&t_of[i], 1u);
            atomicAdd(&deg_of[i], (unsigned long long)(roff[x + 1] - roff[x]));
        },
        [&](i64, const UpperPair& q) {
            const u64 t = t_of[lane];
            // >= 0: each of the t triangles adds deg(w) + deg(u) + deg(x) - 6, every degree >= 2
            if (t) mine += (u128)(u64)((i64)t * (q.deg_w + q.deg_u - 6) + (i64)deg_of[lane]);
        });
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// Diamonds of the whole graph by its triangles: the t triangles on an edge make C(t, 2)
// diamonds with it as their chord. Each triangle w < u < x (upper_pair, rows [r0, r1): the
// whole graph's) adds 1 to each of its edges' counters in tcnt, an edge's counter being
// its entry in its lower end's row: (w, u) at e, (w, x) and (u, x) where the walk and the
// search found x, both in rows of w or u. edge_pairs then adds up C(t, 2). A slice's
// diamonds (a chord's higher end in the slice, its triangles anywhere) are diamond_pairs'.
extern "C" __global__ void LC_BOUNDS diamond_triangles(const i64* roff, const int* rnbr,
                                                       int r0, int r1, unsigned* tcnt) {
    __shared__ PairWalk s_walk[WARPS];
    __shared__ unsigned s_t[WARPS][32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    unsigned* t_of = s_t[wid];
    triangle_rounds(
        roff, rnbr, r0, r1, s_walk[wid], [&] { t_of[lane] = 0; },
        [=](int i, int, i64 k, i64 at) {
            atomicAdd(&t_of[i], 1u);
            atomicAdd(&tcnt[k], 1u);
            atomicAdd(&tcnt[at], 1u);
        },
        [&](i64 e, const UpperPair&) {
            if (t_of[lane]) atomicAdd(&tcnt[e], t_of[lane]);
        });
}

// sum C(t, 2) over tcnt[0, n) into ctl's total (diamond_triangles' counters).
extern "C" __global__ void LC_BOUNDS edge_pairs(const unsigned* tcnt, i64 n, u64* ctl) {
    u128 mine = 0;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += stride) {
        const u64 t = tcnt[i];
        mine += (u128)(t * (t - 1) / 2);
    }
    mine = warp_sum(mine);
    if ((threadIdx.x & 31) == 0) add_total(ctl, mine);
}

// A 4-cycle root ranked r: its id, its first step's row rnbr[a, b) (its u: the entries
// below r, a prefix of the row) and its second step.
struct WedgeRoot {
    i64 id, a, b;
    int second;
};

__device__ __forceinline__ WedgeRoot wedge_root(const i64* roff, const int* pos_of,
                                                const i64* run, const Step* st, int k, int r) {
    const int p = pos_of[r];
    const int j = run_of(run, k, p);
    const i64* row = row_of(roff, st[j], p);
    return WedgeRoot{run[2 * j] + (p - run[2 * j + 1]), row[0], row[1], (j + 1) % k};
}

// The u count of root w (ranked r), or 0 when its id lies outside the slice [x0, x1) or
// it has fewer than two u (no 4-cycle): a binary search of its row, done once a root.
__device__ __forceinline__ i64 wedge_us(const int* rnbr, const WedgeRoot& w, int r, int x0,
                                        int x1) {
    if (w.id < x0 || w.id >= x1 || w.b - w.a < 2 || rnbr[w.a + 1] >= r) return 0;
    return lower_bound(rnbr, w.a, w.b, r) - w.a;
}

// Hubs. The top `hubs` ranks (compact - 1 - h for h < hubs: the largest roots, which hold
// most of the wedges: 72 % in the top 970 of a 20M-edge Chung-Lu graph, 86 % in the top
// 4,000, bench/debug/wedge_root_sizes.py) are walked by the whole grid, a warp an item of
// HUB_CHUNK of a root's u at a time, each root with its own count array in hub_cnt, so
// that the grid's atomics fall on the few roots it is on (lines that stay in L2) rather
// than on every block's own array. Each wedge adds the count it found before it: the
// pairs C(c, 2) of a w reached c times, with no list of the w reached.
//
// A count is that of the wedges r - u - w reaching w, one a u: at most the root's u
// count, and at most w's row length (each u is an entry of w's row, the graph being
// undirected). A root with at most NARROW_MAX u (and narrow_max, the host's: 0 makes every
// array 32-bit, for an A/B) counts in narrow counters: a byte for each w ranked below
// `bytes` (byte_ranks: the first rank whose row is longer than BYTE_MAX; with one label
// the ranks follow the degrees, so at 20M edges all but the top 0.5 %), four a
// 32-bit word, then a 16-bit counter for each w from `bytes` on, two a word; no counter
// reaches its field's top, so none carries into the next. Such an array takes
// narrow_words(bytes, compact) words, about a quarter of a 32-bit one's, so that about
// four times as many hubs fit in the budget, and its memset and its L2 lines shrink alike.
// A larger root (the top few: 5 roots of degree 65,536 or more at 20M edges) keeps 32-bit
// counters, compact words. (The width is a root's, not the graph's: the largest degree,
// 217,091 at 20M edges, would keep every hub at 32 bits.) hub_items writes each candidate
// root's items and its array's words (none for a root that roots no 4-cycle: fewer than
// two u, or outside the slice), scans make them offsets, and the host takes the most top
// ranks whose arrays fit the budget. Measured: bench/results/static/hubs16-1128/ (20M
// edges, 3,860 hubs in 16 GiB with 16-bit counters: 0.209 -> 0.162 s) and session21/.
#ifndef HUB_CHUNK  // gpu/label_count.py passes its HUB_CHUNK (it sizes the long-row queue)
#define HUB_CHUNK 2
#endif
#define NARROW_MAX 65535  // a 16-bit counter's largest value

#ifndef BYTE_MAX  // a byte counter's largest value (tests set less, to mix the widths)
#define BYTE_MAX 255
#endif

// The words of a narrow count array: the byte counters of the ranks below `bytes`, four a
// word, then the 16-bit ones of the ranks from `bytes` to compact, two a word.
__device__ __forceinline__ i64 narrow_words(i64 bytes, i64 compact) {
    return (bytes + 3) / 4 + (compact - bytes + 1) / 2;
}

// The first rank whose first-step row is longer than BYTE_MAX, as compact minus it in
// far (u64, host zeroes: compact - far is then `bytes`, compact when no row is longer).
extern "C" __global__ void byte_ranks(const i64* roff, const int* pos_of, const i64* runs,
                                      int k, const i64* steps, u64* far) {
    Step st[2];
    for (int j = 0; j < k; ++j) st[j] = Step{steps[2 * j], steps[2 * j + 1]};
    const i64 compact = runs[2 * k + 1];
    const i64 stride = (i64)gridDim.x * blockDim.x;
    u64 mine = 0;
    for (i64 x = blockIdx.x * (i64)blockDim.x + threadIdx.x; x < compact; x += stride) {
        const WedgeRoot w = wedge_root(roff, pos_of, runs, st, k, (int)x);
        if (w.b - w.a > BYTE_MAX) {
            mine = (u64)(compact - x);  // the first such x of this thread's
            break;
        }
    }
    for (int d = 16; d > 0; d >>= 1) mine = max(mine, __shfl_xor_sync(0xffffffffu, mine, d));
    if ((threadIdx.x & 31) == 0 && mine) atomicMax(far, mine);
}

extern "C" __global__ void hub_items(const i64* roff, const int* rnbr, const int* pos_of,
                                     const i64* runs, int k, const i64* steps, int x0, int x1,
                                     int hubs, int narrow_max, i64 bytes, i64* items,
                                     i64* slots) {
    Step st[2];
    for (int j = 0; j < k; ++j) st[j] = Step{steps[2 * j], steps[2 * j + 1]};
    const i64 compact = runs[2 * k + 1];
    const i64 narrow = min(narrow_max, NARROW_MAX);
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 h = blockIdx.x * (i64)blockDim.x + threadIdx.x; h < hubs; h += stride) {
        const int r = (int)(compact - 1 - h);
        const i64 n = wedge_us(rnbr, wedge_root(roff, pos_of, runs, st, k, r), r, x0, x1);
        items[h + 1] = (n + HUB_CHUNK - 1) / HUB_CHUNK;
        slots[h + 1] = n == 0 ? 0 : n <= narrow ? narrow_words(bytes, compact) : compact;
    }
}

// Adds 1 to counter x of a narrow count array (layout above: x < bytes a byte of word
// x / 4, else a half of word (bytes + 3) / 4 + (x - bytes) / 2) and returns its value
// before. The caller bounds each counter below its field's top, so none carries.
__device__ __forceinline__ unsigned add_narrow(unsigned* words, int x, i64 bytes) {
    if (x < bytes) {
        const unsigned shift = (x & 3) * 8;
        return (atomicAdd(&words[x >> 2], 1u << shift) >> shift) & 0xffu;
    }
    const i64 y = x - bytes;
    const unsigned shift = (y & 1) * 16;
    return (atomicAdd(&words[(bytes + 3) / 4 + (y >> 1)], 1u << shift) >> shift) & 0xffffu;
}

// Adds 1 to counter x of a hub's count array, 32-bit counters (wide) or narrow ones, and
// returns its value before.
__device__ __forceinline__ unsigned add_count(unsigned* cnt, int x, bool wide, i64 bytes) {
    return wide ? atomicAdd(&cnt[x], 1u) : add_narrow(cnt, x, bytes);
}

// The long rows of hub u, queued by wedge_hubs for hub_rows: a hub's u whose row part
// below the root holds more than HUB_LONG entries is not walked by the warp that met it
// but split into segments of HUB_SEG entries, each a warp's item in hub_rows, so that no
// warp walks long rows one after another while the others wait (bench/results/static/
// session20/: the hub phase took 43.0 ms at HUB_CHUNK 2, 55.9 at 8, 80.8 at 32).
#ifndef HUB_LONG
#define HUB_LONG 2048
#endif
#ifndef HUB_SEG
#define HUB_SEG 2048
#endif

// The wedges of hub h (root r) through its u rnbr[i0, i1) (up to the first ranked at or
// above r), by one warp, a u's row at a time across the lanes: each adds 1 to its w's
// counter in cnt (WIDE: 32-bit counters; else narrow ones, add_narrow) and returns the sum
// of the counts they found before them. A row part longer than HUB_LONG is queued instead
// (q_*: its hub, its part rnbr[lo, hi) and, at q + 1, its segments; q_n counts them).
template <bool WIDE>
__device__ __forceinline__ u128 hub_wedges(const i64* roff, const int* rnbr,
                                           const int* pos_of, const Step& S, i64 i0, i64 i1,
                                           int h, int r, unsigned* cnt, i64 bytes,
                                           int* q_hub, i64* q_lo, i64* q_hi, i64* q_segs,
                                           u64* q_n) {
    const int lane = threadIdx.x & 31;
    u128 found = 0;
    for (i64 i = i0; i < i1; ++i) {
        const int u = rnbr[i];
        if (u >= r) break;
        const i64* urow = row_of(roff, S, pos_of[u]);
        const i64 a = urow[0];
        i64 b = urow[1];
        if (b - a > HUB_LONG) {
            b = lower_bound(rnbr, a, b, r);  // the same in every lane
            if (b - a > HUB_LONG) {
                if (lane == 0) {
                    const u64 q = atomicAdd(q_n, 1ull);
                    q_hub[q] = h;
                    q_lo[q] = a;
                    q_hi[q] = b;
                    q_segs[q + 1] = (b - a + HUB_SEG - 1) / HUB_SEG;
                }
                continue;
            }
        }
        for (i64 j = a + lane; j < b; j += 32) {
            const int x = rnbr[j];
            if (x >= r) break;
            found += add_count(cnt, x, WIDE, bytes);
        }
    }
    return found;
}

// Hubs may be walked HUB_GROUP at a time, their items in a scattered order (an item is the
// claim's place in the group's items times HUB_SPREAD, a prime, modulo their number), so
// that the warps in flight add into the counters of several roots, not of one: a root's
// popular w (the high ranks, in most u's rows) take one atomic add after another on the
// same words. bench/debug/atomic_rate.py on an H200: 25G adds/s skewed into one array, 61G/s
// into eight. At HUB_CHUNK 8 (the phase waiting on its longest items) eight gained
// nothing (57.4 against 55.8 ms, bench/results/static/session20/call3), so 1 (the items
// in order) stays the default until it is measured on balanced items.
#ifndef HUB_GROUP
#define HUB_GROUP 1
#endif
#define HUB_SPREAD 2654435761ll  // a prime above any group's item count

// The item a claim stands for: claims run through the items in order, group by group,
// each group's in the scattered order above.
__device__ __forceinline__ i64 hub_item(const i64* items, int hubs, i64 claim) {
    if (HUB_GROUP == 1) return claim;
    const int h = (int)(lower_bound(items, (i64)0, (i64)hubs + 1, claim + 1) - 1);
    const int g0 = h - h % HUB_GROUP, g1 = min(hubs, g0 + HUB_GROUP);
    const i64 first = items[g0], n = items[g1] - first;
    if (n % HUB_SPREAD == 0 || n >= (1ll << 32)) return claim;  // (never: n is far smaller)
    return first + (i64)((u64)(claim - first) * HUB_SPREAD % (u64)n);  // < 2^32 * 2^32
}

// The 4-cycles of the hub roots: items[h] .. items[h + 1] are hub h's (after the scan;
// items[0] = 0), claimed a warp at a time through claim[0] (hub_item). An item's u are the
// next HUB_CHUNK of its root's row, up to the first ranked at or above the root (hub_items
// counted the u: an item holds at least one). Hub h's count array is words slots[h] ..
// slots[h + 1] of hub_cnt (after the scan; slots[0] = 0): compact words of 32-bit
// counters, or fewer of narrow ones (bytes below `bytes`, add_narrow). The long rows go
// to the queue q_* (capacity: the hubs' u) for hub_rows.
extern "C" __global__ void LC_BOUNDS wedge_hubs(const i64* roff, const int* rnbr,
                                                const int* pos_of, const i64* runs, int k,
                                                const i64* steps, int hubs, i64 bytes,
                                                const i64* items, const i64* slots,
                                                unsigned* hub_cnt, u64* claim, int* q_hub,
                                                i64* q_lo, i64* q_hi, i64* q_segs, u64* q_n,
                                                u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    load_tables(steps, k, runs, k, st, run);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const i64 compact = run[2 * k + 1], total = items[hubs];
    u128 mine = 0;
    for (;;) {
        u64 item = warp_ticket(claim, lane);
        if ((i64)item >= total) break;
        item = hub_item(items, hubs, (i64)item);
        const int h = (int)(lower_bound(items, (i64)0, (i64)hubs + 1, (i64)item + 1) - 1);
        const int r = (int)(compact - 1 - h);
        const WedgeRoot w = wedge_root(roff, pos_of, run, st, k, r);
        unsigned* cnt = hub_cnt + slots[h];
        const i64 i0 = w.a + ((i64)item - items[h]) * HUB_CHUNK, i1 = min(w.b, i0 + HUB_CHUNK);
        if (slots[h + 1] - slots[h] == compact)
            mine += hub_wedges<true>(roff, rnbr, pos_of, st[w.second], i0, i1, h, r, cnt,
                                     bytes, q_hub, q_lo, q_hi, q_segs, q_n);
        else
            mine += hub_wedges<false>(roff, rnbr, pos_of, st[w.second], i0, i1, h, r, cnt,
                                      bytes, q_hub, q_lo, q_hi, q_segs, q_n);
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// The long rows wedge_hubs queued, HUB_SEG entries a warp at a time: q_segs (after the
// scan, q_segs[0] = 0) gives row q's first segment; a warp claims a segment through claim
// and adds each of its entries into the row's hub's counters (slots as in wedge_hubs), the
// counts found before them into ctl's total, as hub_wedges does.
extern "C" __global__ void LC_BOUNDS hub_rows(const int* rnbr, i64 compact, i64 bytes,
                                              const i64* slots, unsigned* hub_cnt,
                                              const int* q_hub,
                                              const i64* q_lo, const i64* q_hi,
                                              const i64* q_segs, const u64* q_n, u64* claim,
                                              u64* ctl) {
    const int lane = threadIdx.x & 31;
    const i64 rows = (i64)*q_n, total = q_segs[rows];
    u128 mine = 0;
    for (;;) {
        const u64 seg = warp_ticket(claim, lane);
        if ((i64)seg >= total) break;
        const i64 q = lower_bound(q_segs, (i64)0, rows + 1, (i64)seg + 1) - 1;
        const int h = q_hub[q];
        const i64 lo = q_lo[q] + ((i64)seg - q_segs[q]) * HUB_SEG;
        const i64 hi = min(q_hi[q], lo + HUB_SEG);
        unsigned* cnt = hub_cnt + slots[h];
        const bool wide = slots[h + 1] - slots[h] == compact;
        for (i64 j = lo + lane; j < hi; j += 32) {
            const int x = rnbr[j];
            mine += add_count(cnt, x, wide, bytes);
        }
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// Wedge tables: open addressing in shared memory, 2^lg entries of a u64 each: a w's rank
// + 1 in the high word and its count in the low one (0: empty), probed linearly from the
// hash of h (the rank without the bits that chose its part). A new w takes an entry only
// while fewer than limit are taken (*used counts them); past that, *full is set and the w
// dropped, and the caller walks the root again in smaller parts. Between a check and its
// count at most (the threads adding at once) w get in, so a table of more than limit - 1 +
// that many entries never fills and a probe always ends.
__device__ __forceinline__ void table_add(u64* tab, int lg, unsigned h, int w, int* used,
                                          int limit, int* full) {
    const unsigned mask = (1u << lg) - 1u;
    const u64 tag = (u64)(unsigned)(w + 1) << 32;
    for (unsigned s = (h * 0x9E3779B1u) >> (32 - lg);; s = (s + 1) & mask) {
        u64 cur = ((volatile u64*)tab)[s];
        if (cur == 0) {
            if (*(volatile int*)used >= limit) {
                *(volatile int*)full = 1;
                return;
            }
            cur = atomicCAS(&tab[s], 0ull, tag | 1ull);
            if (cur == 0) {
                atomicAdd(used, 1);
                return;
            }
        }
        if ((cur & 0xffffffff00000000ull) == tag) {
            atomicAdd(&tab[s], 1ull);
            return;
        }
    }
}

// The pairs C(c, 2) of a table's counts (when keep), entries t, t + stride, ... of its
// size, each returned to empty.
__device__ __forceinline__ u128 table_pairs(u64* tab, int size, int t, int stride, bool keep) {
    u128 sum = 0;
    for (int i = t; i < size; i += stride) {
        const u64 c = tab[i] & 0xffffffffull;
        if (keep) sum += (u128)(c * (c - 1) / 2);
        tab[i] = 0;
    }
    return sum;
}

// Root r's i-th u (rnbr[a + i]) and its row's part below r, [*lo, *hi) (by step S).
__device__ __forceinline__ void u_range(const i64* roff, const int* rnbr, const int* pos_of,
                                        const Step& S, i64 a, i64 i, int r, i64* lo, i64* hi) {
    const i64* row = row_of(roff, S, pos_of[rnbr[a + i]]);
    *lo = row[0];
    *hi = lower_bound(rnbr, *lo, row[1], r);
}

#define WCTL_CLAIM 0  // wctl: wedge_small's next 32 ranks
#define WCTL_BIGS 1   // bigs' length
#define WCTL_BIG 2    // wedge_parts' next root in bigs

// A warp's table in wedge_small: 2^SMALL_LG entries, at most SMALL_LIMIT w (at most the
// entries less 32, the lanes adding at once; a test sets it low to send roots to
// wedge_parts).
#define SMALL_LG (THREADS > 512 ? 6 : 8)
#ifndef SMALL_LIMIT
#define SMALL_LIMIT ((3 << SMALL_LG) / 4)
#endif

// 4-cycles whose highest-ranked vertex has an id in [x0, x1) and a rank below `top` (the
// hubs above it are wedge_hubs'), added into ctl's total: k runs (1: one label; 2: labels
// taking turns), a root of run j taking step j, then step (j + 1) % k. A warp claims 32
// ranks at a time, highest first, finds each one's u count (wedge_us) and walks the roots
// among them one at a time, their u 32 a round (walk_rows), counting the w reached in its
// table; a root whose w pass SMALL_LIMIT is appended to bigs for wedge_parts.
extern "C" __global__ void LC_BOUNDS wedge_small(const i64* roff, const int* rnbr,
                                                 const int* pos_of, const i64* runs, int k,
                                                 const i64* steps, int x0, int x1, int top,
                                                 int* bigs, u64* wctl, u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    __shared__ u64 s_tab[WARPS][1 << SMALL_LG];
    __shared__ RowWalk s_walk[WARPS];
    __shared__ int s_used[WARPS], s_full[WARPS];
    load_tables(steps, k, runs, k, st, run);
    for (int i = threadIdx.x; i < (WARPS << SMALL_LG); i += THREADS) s_tab[0][i] = 0;
    if (threadIdx.x < WARPS) s_used[threadIdx.x] = s_full[threadIdx.x] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    u64* tab = s_tab[wid];
    int *used = &s_used[wid], *full = &s_full[wid];
    u128 mine = 0;
    for (;;) {
        const i64 first = (i64)warp_ticket(&wctl[WCTL_CLAIM], lane) * 32;
        if (first >= top) break;
        const int mine_r = (int)(top - 1 - (first + lane));
        const i64 mine_n = first + lane < top
            ? wedge_us(rnbr, wedge_root(roff, pos_of, run, st, k, mine_r), mine_r, x0, x1) : 0;
        for (unsigned todo = __ballot_sync(0xffffffffu, mine_n > 0); todo; todo &= todo - 1) {
            const int src = __ffs(todo) - 1;
            const int r = __shfl_sync(0xffffffffu, mine_r, src);
            const i64 n = __shfl_sync(0xffffffffu, mine_n, src);
            const WedgeRoot root = wedge_root(roff, pos_of, run, st, k, r);
            // *full is read after a __syncwarp (the reset's or walk_rows' last): uniform
            for (i64 b = 0; b < n && !*(volatile int*)full; b += 32) {
                i64 lo = 0, hi = 0;
                if (b + lane < n)
                    u_range(roff, rnbr, pos_of, st[root.second], root.a, b + lane, r, &lo, &hi);
                walk_rows(rnbr, s_walk[wid], lo, hi, lane, [&](int, i64, int w) {
                    table_add(tab, SMALL_LG, (unsigned)w, w, used, SMALL_LIMIT, full);
                    return !*(volatile int*)full;
                });
            }
            const bool passed = *(volatile int*)full;
            mine += table_pairs(tab, 1 << SMALL_LG, lane, 32, !passed);
            if (passed && lane == 0) bigs[atomicAdd(&wctl[WCTL_BIGS], 1ull)] = r;
            __syncwarp();
            if (lane == 0) *used = *full = 0;
            __syncwarp();
        }
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// A block's table in wedge_parts: 2^PART_LG entries (32 KB at 12), at most PART_LIMIT w
// (at most the entries less THREADS; a test sets it low to make parts halve often).
#define PART_LG (THREADS > 512 ? 11 : 12)
#ifndef PART_LIMIT
#define PART_LIMIT ((3 << PART_LG) / 4 < (1 << PART_LG) - THREADS ? (3 << PART_LG) / 4 \
                                                                   : (1 << PART_LG) - THREADS)
#endif
#define PART_STACK 64  // a part's halves still to walk: one a halving at most (31), and one
// A root's first parts: as many (a power of two) as make its wedges a part at most
// PART_TARGET, so that a part seldom passes PART_LIMIT (its w are at most its wedges).
#define PART_TARGET (2 * PART_LIMIT / 3)
// Three blocks of 512 threads an SM (ptxas' own choice, 62 registers, fits two), unless the
// matcher beside the persistent kernel caps every counting kernel (LC_MIN_BLOCKS).
#ifdef LC_MIN_BLOCKS
#define PARTS_BOUNDS LC_BOUNDS
#else
#define PARTS_BOUNDS __launch_bounds__(THREADS, 1536 / THREADS > 0 ? 1536 / THREADS : 1)
#endif

// The 4-cycles of the roots in bigs (those wedge_small's tables could not hold), a block a
// root, claimed through wctl. A part (p, lg) counts the w whose low lg bits are p: the
// block walks the root's u THREADS a round (walk_rows_block), counts that part's w in its
// table and adds their pairs; a part whose w pass PART_LIMIT is replaced by its two halves
// (p and p + 2^lg of lg + 1), so every w is counted in exactly one part that fits. A root
// starts as 2^lg0 parts, lg0 from its wedges (the lengths of its u's ranges, summed); the
// first round's ranges stay in registers from part to part.
extern "C" __global__ void PARTS_BOUNDS wedge_parts(const i64* roff, const int* rnbr,
                                                 const int* pos_of, const i64* runs, int k,
                                                 const i64* steps, const int* bigs,
                                                 u64* wctl, u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    __shared__ u64 s_tab[1 << PART_LG];
    __shared__ BlockWalk s_walk;
    __shared__ u64 s_stack[PART_STACK];  // parts as lg << 32 | p
    __shared__ int s_root, s_sp, s_used, s_full;
    load_tables(steps, k, runs, k, st, run);
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    for (int i = t; i < (1 << PART_LG); i += THREADS) s_tab[i] = 0;
    if (t == 0) s_used = s_full = 0;
    __syncthreads();
    const u64 nbigs = wctl[WCTL_BIGS];  // wedge_small's, done before this launch
    u128 mine = 0;
    for (;;) {
        if (t == 0) {
            const u64 i = atomicAdd(&wctl[WCTL_BIG], 1ull);
            s_root = i < nbigs ? bigs[i] : -1;
        }
        __syncthreads();
        const int r = s_root;
        if (r < 0) break;
        const WedgeRoot root = wedge_root(roff, pos_of, run, st, k, r);
        const Step& S = st[root.second];
        const i64 n = lower_bound(rnbr, root.a, root.b, r) - root.a;
        i64 lo0 = 0, hi0 = 0, wedges = 0;  // this thread's range of the first round; the sum
        if (t < n) u_range(roff, rnbr, pos_of, S, root.a, t, r, &lo0, &hi0);
        wedges = hi0 - lo0;
        for (i64 b = THREADS + t; b < n; b += THREADS) {
            i64 lo, hi;
            u_range(roff, rnbr, pos_of, S, root.a, b, r, &lo, &hi);
            wedges += hi - lo;
        }
        for (int d = 16; d; d >>= 1) wedges += __shfl_xor_sync(0xffffffffu, wedges, d);
        if (lane == 0) s_walk.warp[wid] = wedges;
        __syncthreads();
        wedges = 0;
        for (int i = 0; i < WARPS; ++i) wedges += s_walk.warp[i];
        int lg0 = 0;
        while (lg0 < 31 && (wedges >> lg0) > PART_TARGET) ++lg0;
        for (u64 p0 = 0; p0 < (1ull << lg0); ++p0) {
            __syncthreads();  // every thread has read s_walk.warp, s_sp of the part before
            if (t == 0) {
                s_stack[0] = (u64)lg0 << 32 | p0;
                s_sp = 1;
            }
            __syncthreads();
            for (;;) {
                const int sp = s_sp;  // read after a __syncthreads: the same in every thread
                if (sp == 0) break;
                const int lg = (int)(s_stack[sp - 1] >> 32);
                const unsigned p = (unsigned)s_stack[sp - 1], mask = (1u << lg) - 1u;
                __syncthreads();  // every thread has the part before thread 0 pops it
                for (i64 b = 0; b < n && !*(volatile int*)&s_full; b += THREADS) {
                    i64 lo = lo0, hi = hi0;
                    if (b > 0) {
                        lo = hi = 0;
                        if (b + t < n) u_range(roff, rnbr, pos_of, S, root.a, b + t, r, &lo, &hi);
                    }
                    walk_rows_block(rnbr, s_walk, lo, hi, [&](int, i64, int w) {
                        if (((unsigned)w & mask) == p)
                            table_add(s_tab, PART_LG, (unsigned)w >> lg, w, &s_used, PART_LIMIT,
                                      &s_full);
                        return !*(volatile int*)&s_full;
                    });
                }
                const bool passed = *(volatile int*)&s_full;
                mine += table_pairs(s_tab, 1 << PART_LG, t, THREADS, !passed);
                __syncthreads();  // every thread has read s_full and emptied its entries
                if (t == 0) {
                    s_sp = sp - 1;
                    if (passed) {  // the two halves (lg <= 30 here: a part of lg 31 holds one w)
                        const u64 half = (u64)(lg + 1) << 32;
                        s_stack[sp - 1] = half | (p | (1u << lg));
                        s_stack[sp] = half | p;
                        s_sp = sp + 1;
                    }
                    s_used = s_full = 0;
                }
                __syncthreads();
            }
        }
        __syncthreads();  // every thread has read s_sp before thread 0 claims the next root
    }
    mine = warp_sum(mine);
    if ((t & 31) == 0) add_total(ctl, mine);
}
