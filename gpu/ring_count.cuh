// ring_count.cuh -- counting rings without a search: diamonds of one vertex label
// (diamond_pairs), tailed triangles of one label (tailed_pairs), and 4-cycles of one label
// or of two labels taking turns (hub_items, wedge_hubs, wedge_roots). The device side of
// dcsm/engine/diamond_count.py and short_cycles.py, whose docstrings give the methods;
// those are the semantics and the host oracle. Included at the end of label_count.cu (the
// loader splices it in), whose helpers, rows and claims it uses. Triangles stay with the
// search, which counts them faster (bench/results/static/rings-1128/: 20M edges, 7.2 ms
// against 86 ms by marks from each root); a tailed triangle took 95 ms by those marks here
// and 90 ms by the search, and tailed_pairs walks only the higher ranks' parts of two rows
// (bench/results/static/session19/).
//
// Each subgraph is counted once, from its root: a 4-cycle's highest-ranked vertex, a
// diamond's chord's higher end, a tailed triangle's triangle's lowest-ranked vertex. Ranks are label_count.cu's (label_ranks): with one label,
// a vertex's rank is its place in its label's run, which the snapshot orders by degree,
// then id (a wildcard label takes every vertex, in id order: label, then degree; exact, as
// any order is, but a high label's roots walk more). Rows are label_count.cu's step rows,
// ranks in rank order: one step (the label to itself, the edge label) for one label, two
// (A to B, B to A) for labels taking turns. With one label over every vertex and any edge
// (or the one label every edge carries), the rows are the snapshot's own
// (gpu/label_count.py).
//
// diamond_pairs: a warp takes 32 row entries at a time, a lane one; for each entry (r, u)
// with u < r (the chord from the root r to a lower rank), the entries of the shorter of
// the two rows are searched in the other (binary search, rows sorted), the warp's lanes
// taking the pairs' entries in turn: t common entries (the apexes), C(t, 2) diamonds.
// Work is spread by entries, so a hub's row is shared by many warps, and nothing but the
// rows is read (no scratch).
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
//   wedge_roots: the ranks below, a block a root, counts in the block's own global array;
//                each w reached first is appended to touched, which then gives the pairs
//                and resets cnt.
// (A warp a small root with its counts in shared memory, wedge_small, gained nothing and
// was removed: bench/results/static/rings-1128/README.md.)
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
//   slots       i64[candidates + 1]: hub h's count-array slots, the same way (0, 1: 16-bit
//               counters, 2: 32-bit); host reads them (how many hubs fit the budget),
//               wedge_hubs reads.
//   hub_cnt     u32[slots of the hubs taken, (compact + 1) / 2]: hub h's wedge counts
//               from slot slots[h] on; host zeroes, wedge_hubs adds.
//   claim       u64[1]: wedge_hubs' next item; host zeroes.
//   cnt         u32[blocks, compact]: wedge_roots' wedge counts, block b's from b * compact;
//               host zeroes it once, each block returns its part to zero after every root.
//   touched     int32[blocks, compact]: the ranks block b reached for its current root;
//               wedge_roots writes and reads.
//   ctl         u64[4]: label_count.cu's [claim, total, total_hi, error]; host zeroes;
//               diamond_pairs, wedge_hubs and wedge_roots add their subgraphs into the
//               128-bit total (the host multiplies by the automorphisms); wedge_roots
//               claims ranks through it (next_root).

// One round of a pair kernel (diamond_pairs, tailed_pairs): each lane holds a pair that
// walks rnbr[lo, hi) and searches each walked entry in rnbr[b0, b1) (an empty walk: no
// pair). The pairs' walks are the warp's concatenation: a warp scan of their lengths gives
// each pair's first item, and an item finds its pair by a binary search over the 32
// firsts, so a long walk is shared by the whole warp. found(i, x) runs for each walked x
// that the search finds, i being its pair's lane. The PairWalk arrays are the warp's own
// (shared memory); the caller's per-pair sums must be reset before the call (its first
// __syncwarp orders them) and read after it (its last one).
struct PairWalk {
    i64 at[32], lo[32], b0[32], b1[32];
};

template <typename Found>
__device__ __forceinline__ void walk_pairs(const int* rnbr, PairWalk& P, i64 lo,
                                           i64 hi, i64 b0, i64 b1, int lane, Found found) {
    const i64 len = hi - lo;
    i64 incl = len;
    for (int d = 1; d < 32; d <<= 1) {
        const i64 v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    const i64 total = __shfl_sync(0xffffffffu, incl, 31);
    P.at[lane] = incl - len;
    P.lo[lane] = lo;
    P.b0[lane] = b0;
    P.b1[lane] = b1;
    __syncwarp();
    for (i64 j = lane; j < total; j += 32) {
        int i = 0;  // the last pair whose first item is at or before j: j's pair
        for (int d = 16; d; d >>= 1)
            if (P.at[i + d] <= j) i += d;
        const int x = rnbr[P.lo[i] + (j - P.at[i])];
        const i64 end = P.b1[i], at = lower_bound(rnbr, P.b0[i], end, x);
        if (at < end && rnbr[at] == x) found(i, x);
    }
    __syncwarp();
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
                   [=](int i, int) { atomicAdd(&t_of[i], 1u); });
        const u64 t = s_t[wid][lane];
        if (t > 1) mine += t * (t - 1) / 2;
        __syncwarp();  // every lane is done with the arrays before the next chunk's
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// Tailed triangles (a triangle and one more fitting neighbour of one of its vertices)
// rooted at ranks [r0, r1) of one label's rows, added into ctl's total: each triangle
// w < u < x is found once, from its lowest rank w, and weighs the fitting neighbours its
// vertices have outside it, deg(w) + deg(u) + deg(x) - 6 (a row holds exactly its vertex's
// fitting neighbours, so its length is that degree). A pair (w, u) with u above w takes the
// two rows' parts above u (row w's from the entry after u's, row u's from its first entry
// above u: one binary search), walks the shorter and searches each entry in the other
// (walk_pairs). The parts are those of the higher ranks, short in a power-law graph whose
// ranks follow the degree: the orientation of triangle counting. Each pair's common entries
// t and the sum of their degrees meet in shared memory.
extern "C" __global__ void LC_BOUNDS tailed_pairs(const i64* roff, const int* rnbr, int r0,
                                                  int r1, u64* ctl) {
    __shared__ PairWalk s_walk[WARPS];
    __shared__ unsigned long long s_deg[WARPS][32];
    __shared__ unsigned s_t[WARPS][32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const i64 e1 = roff[r1];
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    u128 mine = 0;
    for (i64 c = roff[r0] + ((blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5) * 32; c < e1;
         c += warps * 32) {
        const i64 e = c + lane;
        i64 lo = 0, hi = 0, b0 = 0, b1 = 0, base = 0;  // base: deg(w) + deg(u) - 6
        if (e < e1) {
            const int w = (int)(lower_bound(roff, (i64)r0, (i64)r1 + 1, e + 1) - 1);  // e's row
            const int u = rnbr[e];
            if (u > w) {
                const i64 wa = roff[w], wb = roff[w + 1], ua = roff[u], ub = roff[u + 1];
                const i64 ux = lower_bound(rnbr, ua, ub, u + 1);  // row u above u
                const bool u_shorter = ub - ux <= wb - (e + 1);
                lo = u_shorter ? ux : e + 1, hi = u_shorter ? ub : wb;
                b0 = u_shorter ? e + 1 : ux, b1 = u_shorter ? wb : ub;
                base = (wb - wa) + (ub - ua) - 6;
            }
        }
        s_t[wid][lane] = 0;
        s_deg[wid][lane] = 0;
        unsigned* t_of = s_t[wid];
        unsigned long long* deg_of = s_deg[wid];
        walk_pairs(rnbr, s_walk[wid], lo, hi, b0, b1, lane, [=](int i, int x) {
            atomicAdd(&t_of[i], 1u);
            atomicAdd(&deg_of[i], (unsigned long long)(roff[x + 1] - roff[x]));
        });
        const u64 t = s_t[wid][lane];
        // >= 0: each of the t triangles adds deg(w) + deg(u) + deg(x) - 6, every degree >= 2
        if (t) mine += (u128)(u64)((i64)t * base + (i64)s_deg[wid][lane]);
        __syncwarp();  // every lane is done with the arrays before the next chunk's
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
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
// count. A root with at most NARROW_MAX u (and narrow_max, the host's: 0 makes every
// array 32-bit, for an A/B) counts in 16-bit counters, two a 32-bit word, which cannot
// carry into each other, and its array takes half the memory (and half the L2) of a
// 32-bit one, so that twice as many hubs fit in the budget; a larger root (the top few:
// 5 roots of degree 65,536 or more at 20M edges) keeps 32-bit counters. (The width is a
// root's, not the graph's: the largest degree, 217,091 at 20M edges, would keep every
// hub at 32 bits.) hub_cnt is made of slots of (compact + 1) / 2 words: a root with
// 16-bit counters takes one, a 32-bit one two, a root that roots no 4-cycle (fewer than
// two u, or outside the slice) none. hub_items writes each candidate root's items and
// slots, scans make them offsets, and the host takes the most top ranks whose slots fit
// the budget. Measured: bench/results/static/hubs16-1128/ (20M edges, 3,860 hubs in
// 16 GiB: 0.209 -> 0.162 s).
#ifndef HUB_CHUNK
#define HUB_CHUNK 8
#endif
#define NARROW_MAX 65535  // a 16-bit counter's largest value

extern "C" __global__ void hub_items(const i64* roff, const int* rnbr, const int* pos_of,
                                     const i64* runs, int k, const i64* steps, int x0, int x1,
                                     int hubs, int narrow_max, i64* items, i64* slots) {
    Step st[2];
    for (int j = 0; j < k; ++j) st[j] = Step{steps[2 * j], steps[2 * j + 1]};
    const i64 compact = runs[2 * k + 1];
    const i64 narrow = min(narrow_max, NARROW_MAX);
    for (i64 h = blockIdx.x * (i64)blockDim.x + threadIdx.x; h < hubs; h += (i64)gridDim.x * blockDim.x) {
        const int r = (int)(compact - 1 - h);
        const i64 n = wedge_us(rnbr, wedge_root(roff, pos_of, runs, st, k, r), r, x0, x1);
        items[h + 1] = (n + HUB_CHUNK - 1) / HUB_CHUNK;
        slots[h + 1] = n == 0 ? 0 : n <= narrow ? 1 : 2;
    }
}

// Adds 1 to counter x of a 16-bit count array (counter x: the low half of word x / 2
// when x is even, the high half when odd) and returns its value before. The caller
// bounds each counter below 2^16, so a half never carries into the other.
__device__ __forceinline__ unsigned add_narrow(unsigned* words, int x) {
    const unsigned shift = (x & 1) * 16;
    return (atomicAdd(&words[x >> 1], 1u << shift) >> shift) & 0xffffu;
}

// The wedges of hub root r through its u rnbr[i0, i1) (up to the first ranked at or above
// r), by one warp, a u's row at a time across the lanes: each adds 1 to its w's counter
// in cnt (WIDE: 32-bit counters; else 16-bit ones, add_narrow) and returns the sum of the
// counts they found before them.
template <bool WIDE>
__device__ __forceinline__ u128 hub_wedges(const i64* roff, const int* rnbr,
                                           const int* pos_of, const Step& S, i64 i0, i64 i1,
                                           int r, unsigned* cnt) {
    const int lane = threadIdx.x & 31;
    u128 found = 0;
    for (i64 i = i0; i < i1; ++i) {
        const int u = rnbr[i];
        if (u >= r) break;
        const i64* urow = row_of(roff, S, pos_of[u]);
        for (i64 j = urow[0] + lane; j < urow[1]; j += 32) {
            const int x = rnbr[j];
            if (x >= r) break;
            found += WIDE ? atomicAdd(&cnt[x], 1u) : add_narrow(cnt, x);
        }
    }
    return found;
}

// The 4-cycles of the hub roots: items[h] .. items[h + 1] are hub h's (after the scan;
// items[0] = 0), claimed a warp at a time through claim[0]. An item's u are the next
// HUB_CHUNK of its root's row, up to the first ranked at or above the root (hub_items
// counted the u: an item holds at least one). Hub h's count array is slots[h] ..
// slots[h + 1] of hub_cnt (after the scan; slots[0] = 0): 32-bit counters in two slots,
// 16-bit ones in one.
extern "C" __global__ void LC_BOUNDS wedge_hubs(const i64* roff, const int* rnbr,
                                                const int* pos_of, const i64* runs, int k,
                                                const i64* steps, int hubs,
                                                const i64* items, const i64* slots,
                                                unsigned* hub_cnt, u64* claim, u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    load_tables(steps, k, runs, k, st, run);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const i64 compact = run[2 * k + 1], total = items[hubs], slot = (compact + 1) / 2;
    u128 mine = 0;
    for (;;) {
        u64 item = 0;
        if (lane == 0) item = atomicAdd(claim, 1ull);
        item = __shfl_sync(0xffffffffu, item, 0);
        if ((i64)item >= total) break;
        const int h = (int)(lower_bound(items, (i64)0, (i64)hubs + 1, (i64)item + 1) - 1);
        const int r = (int)(compact - 1 - h);
        const WedgeRoot w = wedge_root(roff, pos_of, run, st, k, r);
        unsigned* cnt = hub_cnt + slots[h] * slot;
        const i64 i0 = w.a + ((i64)item - items[h]) * HUB_CHUNK, i1 = min(w.b, i0 + HUB_CHUNK);
        if (slots[h + 1] - slots[h] == 2)
            mine += hub_wedges<true>(roff, rnbr, pos_of, st[w.second], i0, i1, r, cnt);
        else
            mine += hub_wedges<false>(roff, rnbr, pos_of, st[w.second], i0, i1, r, cnt);
    }
    mine = warp_sum(mine);
    if (lane == 0) add_total(ctl, mine);
}

// 4-cycles whose highest-ranked vertex has an id in [x0, x1) and a rank below `top` (the
// hubs above it are wedge_hubs'), added into ctl's total: k runs (1: one label; 2: labels
// taking turns), a root of run j taking step j, then step (j + 1) % k; block b uses cnt
// and touched from b * compact on. Warp 0 finds each root's u count as it claims it
// (wedge_us) and passes it on with the rank.
extern "C" __global__ void LC_BOUNDS wedge_roots(const i64* roff, const int* rnbr,
                                                 const int* pos_of, const i64* runs, int k,
                                                 const i64* steps, int x0, int x1, int top,
                                                 unsigned* cnt_all, int* touched_all,
                                                 u64* ctl) {
    __shared__ Step st[2];
    __shared__ i64 run[2 * 3];
    __shared__ int s_root, s_n, s_tail;
    __shared__ Claims q;
    load_tables(steps, k, runs, k, st, run);
    if (threadIdx.x == 0) s_tail = q.n = q.at = 0;
    __syncthreads();
    const i64 compact = run[2 * k + 1];
    unsigned* cnt = cnt_all + blockIdx.x * compact;
    int* touched = touched_all + blockIdx.x * compact;
    u128 mine = 0;
    for (;;) {
        if (threadIdx.x < 32) {  // warp 0: the next root with two u, and its u count
            int n = 0;
            const int got = next_root(ctl, top, q, [&](int r, int* us) {
                *us = (int)wedge_us(rnbr, wedge_root(roff, pos_of, run, st, k, r), r, x0, x1);
                return *us > 0;
            }, &n);
            if (threadIdx.x == 0) {
                s_root = got;
                s_n = n;
            }
        }
        __syncthreads();
        const int r = s_root, n = s_n;
        if (r < 0) break;
        const WedgeRoot root = wedge_root(roff, pos_of, run, st, k, r);
        const bool block_wide = n < WARPS;  // few u: the block walks one u's row at a time
        const int lane = block_wide ? threadIdx.x : (threadIdx.x & 31);
        const int width = block_wide ? THREADS : 32;
        for (int i = block_wide ? 0 : (threadIdx.x >> 5); i < n; i += block_wide ? 1 : WARPS) {
            const i64* urow = row_of(roff, st[root.second], pos_of[rnbr[root.a + i]]);
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
