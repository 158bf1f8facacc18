// label_count.cu -- counting the matches of a tree or a cycle pattern whose vertex labels are
// fixed and pairwise different, without enumerating a partial match (the device side of
// dcsm/engine/tree_count.py and cycle_count.py, whose docstrings give the method; those are
// the semantics and the host oracle).
//
// Such a pattern cannot map two of its vertices onto one data vertex, so its embeddings are
// its label- and edge-preserving homomorphisms. The snapshot (static_match.py, DeviceCsr)
// numbers its vertices by label, then degree: each label's vertices are one run of ids
// [lo, hi), and in every row the neighbours of one label are one run of entries, found by
// two binary searches (label_run). Counts live in "compact" arrays: pattern label L's run
// takes entries [base_L, base_L + hi_L - lo_L), one u64 a data vertex of that label.
//
// Trees (dynamic programming). msg holds every pattern vertex's message, all set to 1
// (fill_ones); tree_absorb multiplies each parent vertex's message by the sum of its child's
// messages over the child-labelled neighbours (edge label permitting), children before
// parents; sum_range adds the root's messages over the roots asked for.
//
// Cycles (meeting in the middle). Each match is counted once, from its highest-ranked
// vertex (rank: degree, then id, over the vertices of the cycle's labels), as
// cycle_count.py's host code counts it. label_ranks gives every such vertex its rank, which
// is its compact index (crank: run position -> rank; pos_of: rank -> run position): ids
// rise with degree within a label, so each label's run keeps its order and the ranks merge
// the runs. A root x of rank r, labelled c_0 of the walk that starts at its label (one walk
// a pattern vertex, each going the same way round), cuts that walk at c_0 and c_m (m =
// k / 2); one block takes one root at a time, highest rank first, and extends paths layer
// by layer through vertices ranked below r only: steps 0..m-1 forward to c_m, steps
// m..k-2 backward from x to c_{m+1}, each adding a path's count into the count of the
// vertex it reaches (atomicAdd; the thread that finds it at 0 appends it to the block's
// touched list, the next layer). The last step, from c_{m+1} into c_m, multiplies each
// arrival by the forward paths waiting there. Consecutive labels differ and all labels are
// different, so one count array holds every layer of a root; the touched list resets it
// (work proportional to the root's rows, never to the graph). Each distinct step (a
// source label, a destination label, an edge label; the walks share them) walks its own
// rows, built once a count before the roots (step_degrees, a scan, step_fill):
// only the entries it may take, as ranks, so that a root's layers read short contiguous
// rows that stay in L2 rather than binary-searching the snapshot's. A row's entries are
// one destination label's, in id order and so in rank order: a step stops at the first
// entry ranked at or above the root. In a power-law graph a low-degree root then walks
// almost nothing (its neighbours below it have no higher degree), and a hub walks only
// its lower-ranked part (the host model, bench/debug/cycle_rank_model.py: 29x fewer row
// entries than rooting every match at one pattern vertex, 10M edges, labelled 6-cycle).
//
// Buffers (device memory; gpu/label_count.py allocates all of them on the matcher's stream):
//   off, nbr, elab  the snapshot's CSR (static_match.cu's layout block); read only.
//   vlab   int32[nv]       the snapshot's vertex labels, ascending; lower_bounds reads it.
//   keys, found            lower_bounds: keys in, their lower bounds out (label runs and
//                          the roots of a slice of start edges); host writes keys, reads
//                          found.
//   msg    u64[compact]    tree: fill_ones writes, tree_absorb reads a child's and
//                          rewrites a parent's, sum_range reads the root's.
//   runs   i64[2 * (k + 1)]  cycle: the walk's label runs, (first id, first compact
//                          position) each, then (nv, compact); host uploads; label_ranks,
//                          cycle_roots read.
//   crank, pos_of  int32[compact]  cycle: a run position's rank and a rank's run
//                          position; label_ranks writes, step_fill reads crank,
//                          cycle_roots pos_of.
//   roff   i64[sum of (sources + 1)]  cycle: every distinct step's row offsets into rnbr;
//                          step_degrees writes lengths, the scan the offsets;
//                          step_fill, cycle_roots read; host reads the last (rnbr's size).
//   sums   i64[tiles]      the scan's tile totals: scan_tiles writes, scan_inclusive
//                          scans them, scan_add reads.
//   rnbr   int32[entries]  cycle: the steps' rows, ranks; step_fill writes, cycle_roots
//                          reads.
//   steps  i64[distinct steps, 2]  cycle: per step (row_base, src_base: its source run's
//                          first position); host uploads; cycle_roots reads.
//   walks  int32[k, k]     cycle: walk j's (from the pattern vertex of run j) steps, as
//                          rows of steps; host uploads; cycle_roots reads.
//   cnt    u64[blocks, compact]  cycle: block b's path counts by rank; host zeroes it
//                          once, each block returns its part to zero after every root.
//   touched int32[blocks, compact]  cycle: block b's ranks reached for the current root.
//   ctl    u64[4]          [claim, total, total_hi, error]: host zeroes it; cycle_roots
//                          claims ranks (claim); sum_range and cycle_roots add their count
//                          (128-bit, with carry); tree_absorb, cycle_roots OR error bits;
//                          host reads it after.

typedef unsigned long long u64;
typedef unsigned __int128 u128;
typedef long long i64;

#ifndef THREADS
#define THREADS 256
#endif
// LC_MIN_BLOCKS: __launch_bounds__ minimum of blocks an SM for the counting kernels, which
// caps their registers; the matcher beside the persistent kernel sets it (static_match.py,
// BESIDE_COUNT_MIN_BLOCKS), so that its blocks fit beside that kernel's.
#ifdef LC_MIN_BLOCKS
#define LC_BOUNDS __launch_bounds__(THREADS, LC_MIN_BLOCKS)
#else
#define LC_BOUNDS __launch_bounds__(THREADS)
#endif
#define ANY_LABEL (-1)
#define ERR_OVERFLOW 8u  // static_match.cu's ERR_COUNT_OVERFLOW: a count passed its width
#define CTL_CLAIM 0
#define CTL_TOTAL 1
#define CTL_TOTAL_HI 2
#define CTL_ERROR 3
#define WARPS (THREADS / 32)

// The first position in a[lo, hi) (ascending) whose value is >= key.
template <typename T>
__device__ __forceinline__ i64 lower_bound(const T* a, i64 lo, i64 hi, T key) {
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Row x's entries whose neighbour lies in the id run [lo, hi) (one label's vertices).
__device__ __forceinline__ void label_run(const i64* off, const int* nbr, int x, int lo,
                                          int hi, i64* k0, i64* k1) {
    i64 a = off[x], b = off[x + 1];
    *k0 = lower_bound(nbr, a, b, lo);
    *k1 = lower_bound(nbr, *k0, b, hi);
}

__device__ __forceinline__ bool edge_ok(const int* elab, i64 k, int want) {
    return want == ANY_LABEL || elab[k] == want;
}

// ctl's 128-bit total += v (one word at a time, the low word's carry into the high one).
__device__ __forceinline__ void add_total(u64* ctl, u128 v) {
    if (v == 0) return;
    u64 lo = (u64)v, old = atomicAdd(&ctl[CTL_TOTAL], lo);
    u64 hi = (u64)(v >> 64) + (old + lo < old ? 1ull : 0ull);
    if (hi) atomicAdd(&ctl[CTL_TOTAL_HI], hi);
}

// The next value of *ctr for the whole warp: lane 0 takes it, the others get it by a
// shuffle (every lane calls it).
__device__ __forceinline__ u64 warp_ticket(u64* ctr, int lane) {
    u64 t = 0;
    if (lane == 0) t = atomicAdd(ctr, 1ull);
    return __shfl_sync(0xffffffffu, t, 0);
}

__device__ __forceinline__ u128 warp_sum(u128 v) {
    for (int d = 16; d; d >>= 1) {
        u64 lo = __shfl_down_sync(0xffffffffu, (u64)v, d);
        u64 hi = __shfl_down_sync(0xffffffffu, (u64)(v >> 64), d);
        v += ((u128)hi << 64) | lo;
    }
    return v;
}

// found[i] = the lower bound of keys[i] in a[0, n): label runs in vlab (int32 keys, passed
// widened) and a slice's roots in off.
extern "C" __global__ void lower_bounds_i32(const int* a, i64 n, const i64* keys, int nk,
                                            i64* found) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nk) found[i] = lower_bound(a, (i64)0, n, (int)keys[i]);
}

extern "C" __global__ void lower_bounds_i64(const i64* a, i64 n, const i64* keys, int nk,
                                            i64* found) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nk) found[i] = lower_bound(a, (i64)0, n, keys[i]);
}

extern "C" __global__ void fill_ones(u64* a, i64 n) {
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)
        a[i] = 1;
}

// acc[x - p_lo] *= sum of child[y - c_lo] over x's neighbours y in [c_lo, c_hi) by an edge
// labelled edge_label (ANY_LABEL: any), for every x of [p_lo, p_hi) with acc != 0; a warp
// a parent vertex. A sum or product past 2^64 - 1 sets ERR_OVERFLOW.
extern "C" __global__ void LC_BOUNDS tree_absorb(const i64* off, const int* nbr,
                                                 const int* elab, int p_lo, int p_hi,
                                                 int c_lo, int c_hi, int edge_label,
                                                 const u64* child, u64* acc, u64* ctl) {
    int lane = threadIdx.x & 31;
    i64 warp = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5;
    i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 x = p_lo + warp; x < p_hi; x += warps) {
        u64 a = acc[x - p_lo];
        if (a == 0) continue;  // the same for the whole warp
        i64 k0, k1;
        label_run(off, nbr, (int)x, c_lo, c_hi, &k0, &k1);
        u128 s = 0;
        for (i64 k = k0 + lane; k < k1; k += 32)
            if (edge_ok(elab, k, edge_label)) s += child[nbr[k] - c_lo];
        s = warp_sum(s);
        if (lane == 0) {
            u64 s64 = (u64)s;
            bool over = (s >> 64) != 0 || __umul64hi(a, s64) != 0;
            acc[x - p_lo] = a * s64;
            if (over) atomicOr(&ctl[CTL_ERROR], ERR_OVERFLOW);
        }
    }
}

// ctl's total += sum of a[lo, hi).
extern "C" __global__ void sum_range(const u64* a, i64 lo, i64 hi, u64* ctl) {
    u128 s = 0;
    for (i64 i = lo + blockIdx.x * (i64)blockDim.x + threadIdx.x; i < hi;
         i += (i64)gridDim.x * blockDim.x)
        s += a[i];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) add_total(ctl, s);
}


// The ranks. runs[2 j], runs[2 j + 1]: run j's first id and first compact position, j < k;
// runs[2 k], runs[2 k + 1]: nv and compact. Vertex x of run j, at position p, has rank
// (p - its run's first position) plus, for every other run, the number of its vertices
// ranked below x ((degree, id) < x's): a binary search, ids rising with degree in a run.
__device__ __forceinline__ int run_of(const i64* runs, int k, i64 p) {
    int j = 0;
    while (j + 1 < k && runs[2 * (j + 1) + 1] <= p) ++j;
    return j;
}

__device__ __forceinline__ i64 ranked_below(const i64* off, i64 lo, i64 hi, i64 deg, i64 x) {
    while (lo < hi) {  // the first y of [lo, hi) with (degree(y), y) >= (deg, x)
        const i64 mid = (lo + hi) >> 1;
        const i64 d = off[mid + 1] - off[mid];
        if (d < deg || (d == deg && mid < x)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

extern "C" __global__ void label_ranks(const i64* off, const i64* runs, int k, int* crank,
                                       int* pos_of) {
    const i64 compact = runs[2 * k + 1];
    for (i64 p = blockIdx.x * (i64)blockDim.x + threadIdx.x; p < compact;
         p += (i64)gridDim.x * blockDim.x) {
        const int j = run_of(runs, k, p);
        const i64 x = runs[2 * j] + (p - runs[2 * j + 1]);
        const i64 deg = off[x + 1] - off[x];
        i64 r = p - runs[2 * j + 1];
        for (int l = 0; l < k; ++l) {
            if (l == j) continue;
            const i64 lo = runs[2 * l], n = runs[2 * l + 3] - runs[2 * l + 1];
            r += ranked_below(off, lo, lo + n, deg, x) - lo;
        }
        crank[p] = (int)r;
        pos_of[r] = (int)p;
    }
}

// Rows of the cycle's distinct steps. Step t's rows are those of its source label's run,
// each holding the ranks of the neighbours the step may reach (its destination label, its
// edge label): roff[row_base + i] .. roff[row_base + i + 1] into rnbr for the run's i-th
// vertex. step_degrees writes row i's length at roff[row_base + 1 + i] (the step's first
// slot stays 0), the scan turns the whole of roff into offsets (each step's first
// slot then holds where the step before it ended), step_fill writes the entries.

// Entries of row x whose neighbour lies in [dst_lo, dst_hi) by an edge labelled
// edge_label (ANY_LABEL: any), counted by a warp a source vertex src_lo + i, i < n.
extern "C" __global__ void step_degrees(const i64* off, const int* nbr, const int* elab,
                                        int src_lo, int n, int dst_lo, int dst_hi,
                                        int edge_label, i64* deg) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 i = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        i64 k0, k1;
        label_run(off, nbr, (int)(src_lo + i), dst_lo, dst_hi, &k0, &k1);
        int d = 0;
        for (i64 k = k0 + lane; k < k1; k += 32) d += edge_ok(elab, k, edge_label);
        for (int o = 16; o; o >>= 1) d += __shfl_down_sync(0xffffffffu, d, o);
        if (lane == 0) deg[i] = d;
    }
}

// a[lo, hi) = its inclusive prefix sums, by one block: thread t sums a contiguous chunk,
// the block scans the chunk sums, each thread rewrites its chunk. Returns the total to
// every thread.
__device__ i64 block_scan(i64* a, i64 lo, i64 hi) {
    __shared__ i64 part[THREADS];
    const i64 n = hi - lo, chunk = (n + THREADS - 1) / THREADS;
    const i64 c0 = lo + min(n, threadIdx.x * chunk), c1 = min(hi, c0 + chunk);
    i64 sum = 0;
    for (i64 i = c0; i < c1; ++i) sum += a[i];
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int d = 1; d < THREADS; d <<= 1) {  // Hillis-Steele over the chunk sums
        const i64 v = threadIdx.x >= d ? part[threadIdx.x - d] : 0;
        __syncthreads();
        part[threadIdx.x] += v;
        __syncthreads();
    }
    i64 run = threadIdx.x ? part[threadIdx.x - 1] : 0;
    for (i64 i = c0; i < c1; ++i) a[i] = run += a[i];
    const i64 total = part[THREADS - 1];
    __syncthreads();  // part is read by all before a next call rewrites it
    return total;
}

// Inclusive prefix sums of a[0, n) in three launches: scan_tiles (block b scans the tile
// [b * tile, (b + 1) * tile) and writes its total to sums[b]), scan_inclusive over sums
// (one block), scan_add (block b > 0 adds sums[b - 1] to its tile). One tile: only
// scan_inclusive over a itself.
extern "C" __global__ void scan_inclusive(i64* a, i64 n) { block_scan(a, 0, n); }

extern "C" __global__ void scan_tiles(i64* a, i64 n, i64 tile, i64* sums) {
    const i64 lo = blockIdx.x * tile;
    const i64 total = block_scan(a, lo, min(n, lo + tile));
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}

extern "C" __global__ void scan_add(i64* a, i64 n, i64 tile, const i64* sums) {
    if (blockIdx.x == 0) return;
    const i64 lo = blockIdx.x * tile, hi = min(n, lo + tile), add = sums[blockIdx.x - 1];
    for (i64 i = lo + threadIdx.x; i < hi; i += THREADS) a[i] += add;
}

// The entries step_degrees counted, as ranks dst_rank[z - dst_lo] (dst_rank: crank from
// the destination run's first position on), in row order (a warp a source vertex, the
// ballot keeping the row's order, which is then rank order).
extern "C" __global__ void step_fill(const i64* off, const int* nbr, const int* elab,
                                     int src_lo, int n, int dst_lo, int dst_hi,
                                     int edge_label, const int* dst_rank, const i64* roff,
                                     int* rnbr) {
    const int lane = threadIdx.x & 31;
    const i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 i = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
        i64 k0, k1;
        label_run(off, nbr, (int)(src_lo + i), dst_lo, dst_hi, &k0, &k1);
        i64 at = roff[i];
        for (i64 k = k0; k < k1; k += 32) {
            const bool ok = k + lane < k1 && edge_ok(elab, k + lane, edge_label);
            const unsigned mask = __ballot_sync(0xffffffffu, ok);
            if (ok) rnbr[at + __popc(mask & ((1u << lane) - 1))] = dst_rank[nbr[k + lane] - dst_lo];
            at += __popc(mask);
        }
    }
}

struct Step {
    i64 row_base;  // the step's first slot in roff
    i64 src_base;  // its source run's first compact position
};

#define MAX_K 16  // dcsm/model.py's MAX_PATTERN_VERTICES
#define MAX_STEPS (2 * MAX_K)  // each pattern edge, either way

// Row of the vertex ranked y (at run position pos_of[y]) in step S.
__device__ __forceinline__ const i64* row_of(const i64* roff, const Step& S, int pos) {
    return roff + S.row_base + (pos - S.src_base);
}

// The block's copy in shared memory of the step table (nsteps (row_base, src_base) pairs)
// and the run table (runs[0, 2 * (k + 1))), each thread its share; the caller's
// __syncthreads publishes them (cycle_roots, ring_count.cuh's 4-cycle kernels).
__device__ __forceinline__ void load_tables(const i64* steps, int nsteps, const i64* runs,
                                            int k, Step* st, i64* run) {
    for (int i = threadIdx.x; i < nsteps; i += THREADS) st[i] = Step{steps[2 * i], steps[2 * i + 1]};
    for (int i = threadIdx.x; i < 2 * (k + 1); i += THREADS) run[i] = runs[i];
}

// Extend the paths ending at layer[0, n) (ranks) by step S to the vertices ranked below
// bound (rows in rank order: a lane stops at its first entry at or above it): each adds
// its count into the count of every vertex it reaches; a vertex reached first is appended
// to touched[*tail]. first: the layer is the root alone (rank bound), with one path, outside
// the count array. Warps take the layer's vertices in turn, or, for a layer smaller than
// the block's warps, the block takes one vertex at a time (a hub root's row spread over
// every thread).
__device__ void extend(const i64* roff, const int* rnbr, const int* pos_of, const Step& S,
                       const int* layer, int n, bool first, int bound, u64* cnt,
                       int* touched, int* tail, u64* ctl) {
    bool block_wide = n < WARPS;
    int lane = block_wide ? threadIdx.x : (threadIdx.x & 31);
    int width = block_wide ? THREADS : 32;
    int from = block_wide ? 0 : (threadIdx.x >> 5);
    int stride = block_wide ? 1 : WARPS;
    for (int i = from; i < n; i += stride) {
        int y = first ? bound : layer[i];
        u64 c = first ? 1ull : cnt[y];
        const i64* row = row_of(roff, S, pos_of[y]);
        const i64 k0 = row[0], k1 = row[1];
        for (i64 k = k0 + lane; k < k1; k += width) {
            int z = rnbr[k];
            if (z >= bound) break;
            u64 old = atomicAdd(&cnt[z], c);
            if (old == 0) touched[atomicAdd(tail, 1)] = z;
            if (old + c < old) atomicOr(&ctl[CTL_ERROR], ERR_OVERFLOW);
        }
    }
}

// Whether the root ranked r (at position p) steps below itself by step S: its row's first
// entry (the row's lowest rank) lies below r.
__device__ __forceinline__ bool steps_below(const i64* roff, const int* rnbr, const Step& S,
                                            int p, int r) {
    const i64* row = row_of(roff, S, p);
    return row[0] < row[1] && rnbr[row[0]] < r;
}

// Claims. Blocks claim units of ranks, highest first: the first CLAIM_ONE ranks one a
// unit (the hubs, each a long root, spread over the blocks), the rest CLAIM_RUN a unit,
// whose ranks warp 0 checks side by side (most are low-degree vertices that cannot root a
// match) and queues in shared memory.
#ifndef CLAIM_ONE
#define CLAIM_ONE 65536
#endif
#define CLAIM_RUN 32

struct Claims {  // warp 0's queue, in shared memory
    int rank[CLAIM_RUN], tag[CLAIM_RUN], n, at;
};

// The block's next root among the ranks [0, ranks) (cycle_roots), by warp 0, every lane
// of it: its rank, or -1 when every rank is claimed, and in *tag what fits found out about
// it. fits(r, &tag) says whether the root ranked r is to be walked (in the slice, and able
// to root a match) and sets its tag (the walk it takes). q.n and q.at start at 0.
template <class Fits>
__device__ int next_root(u64* ctl, i64 ranks, Claims& q, Fits fits, int* tag) {
    const int lane = threadIdx.x;
    int got = -1, t = 0;
    for (;;) {
        __syncwarp();
        if (q.at < q.n) {
            got = q.rank[q.at];
            t = q.tag[q.at];
            break;
        }
        const u64 unit = warp_ticket(&ctl[CTL_CLAIM], lane);
        const bool one = unit < (u64)CLAIM_ONE;
        const i64 first = one ? (i64)unit : CLAIM_ONE + (i64)(unit - CLAIM_ONE) * CLAIM_RUN;
        if (first >= ranks) break;
        const i64 idx = first + lane;
        bool ok = idx < ranks && (lane == 0 || !one);
        int r = 0, tl = 0;
        if (ok) {
            r = (int)(ranks - 1 - idx);
            ok = fits(r, &tl);
        }
        const unsigned mask = __ballot_sync(0xffffffffu, ok);
        __syncwarp();  // every lane has read q.at and q.n
        if (ok) {
            const int at = __popc(mask & ((1u << lane) - 1));
            q.rank[at] = r;
            q.tag[at] = tl;
        }
        if (lane == 0) {
            q.n = __popc(mask);
            q.at = 0;
        }
    }
    __syncwarp();  // every lane has read q.at
    if (lane == 0 && got >= 0) ++q.at;
    *tag = t;
    return got;
}

// The matches whose highest-ranked vertex has an id in [x0, x1), added into ctl's total;
// block b uses cnt and touched from b * compact on. A rank is passed over when its vertex
// lies outside the slice or its walk cannot step below it both ways from the root.
// k <= MAX_K, m = k / 2.
extern "C" __global__ void LC_BOUNDS cycle_roots(const i64* roff, const int* rnbr,
                                                 const int* pos_of, const i64* runs,
                                                 const i64* steps, int nsteps,
                                                 const int* walks, int k, int m, int x0,
                                                 int x1, u64* cnt_all, int* touched_all,
                                                 u64* ctl) {
    __shared__ Step st[MAX_STEPS];
    __shared__ int walk[MAX_K * MAX_K];
    __shared__ i64 run[2 * (MAX_K + 1)];
    __shared__ int s_root, s_walk, s_tail;
    __shared__ Claims q;
    load_tables(steps, nsteps, runs, k, st, run);
    for (int i = threadIdx.x; i < k * k; i += THREADS) walk[i] = walks[i];
    if (threadIdx.x == 0) s_tail = q.n = q.at = 0;
    __syncthreads();
    const i64 compact = run[2 * k + 1];
    u64* cnt = cnt_all + blockIdx.x * compact;
    int* touched = touched_all + blockIdx.x * compact;
    u128 mine = 0;  // this thread's arrivals times forward paths, over its block's roots
    bool over = false;
    for (;;) {
        if (threadIdx.x < 32) {  // warp 0: the next root, from the queue or a new unit
            int w = 0;
            const int got = next_root(ctl, compact, q, [&](int r, int* wl) {
                const int p = pos_of[r];
                *wl = run_of(run, k, p);
                const i64 x = run[2 * *wl] + (p - run[2 * *wl + 1]);
                return x >= x0 && x < x1 && steps_below(roff, rnbr, st[walk[*wl * k]], p, r) &&
                       steps_below(roff, rnbr, st[walk[*wl * k + m]], p, r);
            }, &w);
            if (threadIdx.x == 0) {
                s_root = got;
                s_walk = w;
            }
        }
        __syncthreads();
        const int r = s_root;
        if (r < 0) break;
        const int* ws = walk + s_walk * k;
        // forward: from the root through layers touched[a, b) labelled c_1 .. c_m
        int a = 0, b = 0;
        for (int s = 0; s < m && (s == 0 || a < b); ++s) {
            extend(roff, rnbr, pos_of, st[ws[s]], touched + a, s == 0 ? 1 : b - a, s == 0, r,
                   cnt, touched, &s_tail, ctl);
            __syncthreads();
            a = b;
            b = s_tail;
            __syncthreads();  // read by all before the next step's appends move it
        }
        if (a < b) {  // paths reach c_m; backward: from the root through c_{k-1} .. c_{m+1}
            int la = b, lb = b;
            for (int s = m; s < k - 1 && (s == m || la < lb); ++s) {
                extend(roff, rnbr, pos_of, st[ws[s]], touched + la, s == m ? 1 : lb - la,
                       s == m, r, cnt, touched, &s_tail, ctl);
                __syncthreads();
                la = lb;
                lb = s_tail;
                __syncthreads();
            }
            if (la < lb) {  // the last step: arrivals at c_m times the forward paths there
                const Step& S = st[ws[k - 1]];
                int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
                for (int i = la + warp; i < lb; i += WARPS) {
                    int y = touched[i];
                    u64 c = cnt[y];
                    const i64* row = row_of(roff, S, pos_of[y]);
                    for (i64 q = row[0] + lane; q < row[1]; q += 32) {
                        const int z = rnbr[q];
                        if (z >= r) break;
                        u64 f = cnt[z];
                        u128 t = mine + (u128)c * f;
                        over |= t < mine;
                        mine = t;
                    }
                }
            }
        }
        __syncthreads();  // the last step has read every forward count
        // return every count this root raised to zero, for the next root
        int used = s_tail;
        for (int i = threadIdx.x; i < used; i += THREADS) cnt[touched[i]] = 0;
        __syncthreads();  // every thread has read s_tail and reset its share
        if (threadIdx.x == 0) s_tail = 0;
        // the next claim's __syncthreads publishes s_tail = 0 before any step adds to it
    }
    if (over) atomicOr(&ctl[CTL_ERROR], ERR_OVERFLOW);
    // 128-bit warp sum, then one add a warp (a sum past 2^128 is not checked: k <= 16
    // steps of u64 counts over at most 2^31 roots stay far below it only when they are
    // each below 2^64, which `over` checks)
    mine = warp_sum(mine);
    if ((threadIdx.x & 31) == 0) add_total(ctl, mine);
}

#include "ring_count.cuh"
