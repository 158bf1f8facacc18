// updater_small.cuh -- the short path: a batch of at most SMALL_MAX updates applied by
// updater warp 0, one lane per update, with no job posted (issue 13, item 1); the other
// updater warps, idle otherwise, take their share of its vertices' merges. At low
// update rates a batch holds one or two updates, and the job pipeline's fixed cost (fifteen
// jobs, each a fence and two barriers) is the whole of its time; here the same edits take a
// few dependent reads per touched vertex. Semantics are the bulk path's exactly: the same
// outcomes, in-place deletions before a vertex's first insertion, one new version per vertex
// with an applied insertion, deletions after the first insertion ended in the new version,
// the old version retired to the GC queue once the new one is published. A new version
// either appends a tail in its vertex's run (few insertions into a long list, J_SEGINFO's
// rule: the old tail's live entries merged with the insertions, after the old tail; the
// base stays, shared) or takes a new run (the old live entries merged with the insertions,
// dead ones dropped; from a list with a tail, merge_small_tail keeps them).
//
// Buffers: batch rec (reads), outcome/elab/nitems/len_a/len_b (writes, each lane its own
// update's), vlab/ext (writes), head (reads, publishes), vers and entries (new versions,
// dt edits), slab_free/ver_free (pops, as `allocate`), gcq (appends), st.small_* and
// st.model_* (updater w0, lane 0), SmallShared in block 0's shared memory (updater w0
// writes; the other updater warps read it between two named barriers and write S.live and
// S.chunks for the vertices they merge), then J_COUNT's and J_ITEMS's task functions for
// upd/upd_count/items.
//
// Which path a batch takes is decided by measured cost (choose_small): the short path's cost
// is modelled as model_fixed_ns a batch plus model_update_ps per update plus model_chunk_ps
// per 32 old entries it copies, the bulk path's as the running mean (ewma) of its batches of
// at most SMALL_MAX updates; every SMALL_PROBE-th eligible batch takes the other path, so
// both estimates stay measured. The fixed part is learnt from batches of one or two updates,
// the part per update from larger ones (learn_small): a cost per update alone, learnt from
// batches of one update at low rates, priced a batch of ten at ten batches' fixed cost and
// sent it down the bulk path (100K/s: 10-19 % of the batches).

#if SMALL_MAX > 32
#error "SMALL_MAX must be at most 32 (one lane per update on the short path)"
#endif

// From updater.cuh (the pools and the live query plans, shared with the bulk path).
__device__ bool pop_units(const Ctx& C, int k, u64* head, const u64* tail, u64* bump, u64 bump_cap,
                          u64 unit, u64& ring_h, int& ring_n, u64& bump0);
__device__ void live_plans(const Ctx& C, int tau0, int nb, int lane);

__device__ __forceinline__ void ewma(u64& model, u64 sample) {
    model = (u64)((i64)model + ((i64)sample - (i64)model) / 8);
}

// Chunks of 32 old entries the short path would copy: both endpoints' current lists, or
// their tails where one insertion would append (a vertex touched twice counts twice; an
// estimate). Whole warp; every lane gets the sum.
__device__ int small_chunks(const Ctx& C, const Batch& B, int nb, int lane) {
    int chunks = 0;
    if (lane < nb) {
        const int ends[2] = {ld(B.rec[lane].a), ld(B.rec[lane].b)};
        const int v[2] = {__ldcg(C.head + ends[0]), __ldcg(C.head + ends[1])};
        for (int s = 0; s < 2; ++s) {
            if (v[s] < 0) continue;
            const Version ov = load_version(C.vers + v[s]);
            chunks += ((appends_tail(ov, 1) ? ov.len - ov.blen : ov.len) + 31) / 32;
        }
    }
    for (int d = 16; d > 0; d >>= 1) chunks += __shfl_xor_sync(0xffffffffu, chunks, d);
    return chunks;
}

// Should the batch of nb updates take the short path? (updater w0, whole warp)
__device__ bool choose_small(const Ctx& C, UpdShared& S, int nb, bool hold, int lane) {
    if (SMALL_PATH == 0 || nb > SMALL_MAX || hold) return false;
    const int chunks = small_chunks(C, *C.batch, nb, lane);
    int small = 0;
    if (lane == 0) {
        State& st = *C.st;
        if (st.model_bulk_ns == 0) {  // the first eligible batch (in hold mode the bulk
                                      // path's ewma may start first: the rest learn from 0)
            st.model_fixed_ns = SMALL_FIXED_NS0;
            st.model_update_ps = SMALL_UPDATE_PS0;
            st.model_chunk_ps = SMALL_CHUNK_PS0;
            st.model_bulk_ns = BULK_NS0;
        }
        const u64 predicted_ns =
            st.model_fixed_ns + (nb * st.model_update_ps + chunks * st.model_chunk_ps) / 1000;
        small = SMALL_PATH == 2 || predicted_ns < st.model_bulk_ns;
        if (++st.small_probe % SMALL_PROBE == 0) small = !small;
        S.chunks = chunks;
    }
    return __shfl_sync(0xffffffffu, small, 0) != 0;
}

// Per-vertex state of a short batch (block 0's shared memory; updater w0 writes it, and the
// other updater warps read it for their merges): vertex index j < nv names a distinct
// vertex the batch's applied updates touch.
struct SmallShared {
    int x[2 * SMALL_MAX];        // the vertex
    int cur[2 * SMALL_MAX];      // its current version (-1: none)
    int first[2 * SMALL_MAX];    // update index of its first applied insertion (32: none)
    i64 off[2 * SMALL_MAX];      // the current version's list: positions [0, len), base
    i64 off2[2 * SMALL_MAX];     //   entries off + p for p < blen, tail entries off2 + p
    int len[2 * SMALL_MAX], blen[2 * SMALL_MAX];
    int nins[2 * SMALL_MAX];     // applied insertions
    int cls[2 * SMALL_MAX];      // size class of its new version (-1: no new version)
    int app[2 * SMALL_MAX];      // 1: the new version appends a tail in the current run
    i64 moff[2 * SMALL_MAX];     // what the merge reads: entries [moff, moff + mlen) (the
    int mlen[2 * SMALL_MAX];     //   whole list, or for an append the old tail) ...
    i64 noff[2 * SMALL_MAX];     // ... and where it writes the new run (or the new tail)
    int rank[2 * SMALL_MAX];     // rank among the new versions of its class
    int vrank[2 * SMALL_MAX];    // rank among all new versions
    int v[2 * SMALL_MAX], slab[2 * SMALL_MAX];  // the new version and its slab run
    int live[2 * SMALL_MAX];     // old live entries merged into it
    int ndead[2 * SMALL_MAX];    // its dead entries, at most: those merge_tail kept, and those
                                 //   ended by deletions after the first insertion
    // Per update k of the batch, for the warps that merge (merge_share): its ends, label and
    // per side s its rank among its vertex's insertions and, for merge_small_tail, the old
    // entries at or below its neighbour in the base and the tail; ins: the applied
    // insertions (bit k).
    // (Indexed by lane: 32 whatever SMALL_MAX is.)
    int ua[32], ub[32], ulab[32];
    int urank[2][32], uabove[2][32], uabove_tail[2][32];
    unsigned ins;
    int tau0, nmerge;            // nmerge: vertices to merge (0 when the pools failed)
    int chunks;                  // old chunks the merges copied (for the cost model)
    int nv, nver;
    int cnt[NCLASS];             // new versions per class
    u64 ring_h[NCLASS], bump0[NCLASS];
    int ring_n[NCLASS];
    u64 ver_h, ver_b0;
    int ver_n;
};

// Where a short batch's time went (updater w0, lane 0): the chunks its merges copied, and
// the clock at the end of each step (classify, prepare, merge, publish, items: SMALL_STEPS
// in gpu/layout.py).
struct SmallCost { int chunks; u64 t[NSMALL]; };

// Update the cost models and step times with a short batch of nb updates that began at t0
// (w0, lane 0).
__device__ void learn_small(State& st, int nb, u64 t0, const SmallCost& cost) {
    const u64 merge_ns = cost.t[2] - cost.t[1];
    if (cost.chunks > 0) ewma(st.model_chunk_ps, merge_ns * 1000 / cost.chunks);
    const i64 rest_ns = (i64)(cost.t[NSMALL - 1] - t0 - merge_ns);  // all but the merges
    if (nb <= 2)
        ewma(st.model_fixed_ns, (u64)max(0LL, rest_ns - (i64)(nb * st.model_update_ps / 1000)));
    else
        ewma(st.model_update_ps, (u64)max(0LL, (rest_ns - (i64)st.model_fixed_ns) * 1000 / nb));
    for (int k = 0; k < NSMALL; ++k) st.small_ns[k] += cost.t[k] - (k ? cost.t[k - 1] : t0);
    st.small_batches += 1;
    st.small_updates += nb;
}

// One lane per update of the batch: what the short path knows about it. Side s of the
// update is its endpoint a (s = 0) or b (s = 1); vi[s] is that vertex's index.
struct SmallLane {
    bool applied, ins;
    int a, b, label, tau;
    int vi[2];
    __device__ int end(int s) const { return s ? b : a; }
    __device__ int other(int s) const { return s ? a : b; }
};

// Take the version ids and slab runs of every new version from the pools (w0, lane 0), as
// `allocate` does for a bulk batch.
__device__ bool take_runs(const Ctx& C, SmallShared& S) {
    State* st = C.st;
    if (!pop_units(C, S.nver, &st->ver_free_head, &st->ver_free_tail, &st->ver_bump, C.maxver, 1,
                   S.ver_h, S.ver_n, S.ver_b0)) {
        vstore(&C.dstat->error, (u64)ERR_VERSIONS_EXHAUSTED);
        return false;
    }
    atomicAdd(&st->versions_in_use, (u64)S.nver);
    for (int c = 0; c < NCLASS; ++c) {
        if (S.cnt[c] == 0) continue;
        if (!pop_units(C, S.cnt[c], &st->free_head[c], &st->free_tail[c], &st->slab_bump, C.bump_cap,
                       1ULL << c, S.ring_h[c], S.ring_n[c], S.bump0[c])) {
            vstore(&C.dstat->error, (u64)ERR_POOL_EXHAUSTED);
            return false;
        }
        atomicAdd(&st->slabs_in_use, (u64)S.cnt[c] << c);
    }
    return true;
}

// Vertex j's new version id and slab run, by its ranks (one lane; as J_ALLOC): an append
// keeps its current run.
__device__ void place_run(const Ctx& C, SmallShared& S, int j) {
    const int c = S.cls[j], r = S.rank[j], vr = S.vrank[j];
    if (S.app[j]) {
        S.slab[j] = (int)(S.off[j] / 32);
    } else {
        S.slab[j] = r < S.ring_n[c]
            ? ld(C.slab_free[class_base(C, c) + (S.ring_h[c] + r) % (C.nslabs >> c)])
            : (int)(S.bump0[c] + (u64)(r - S.ring_n[c]) * (1ULL << c));
        S.noff[j] = (i64)S.slab[j] * 32;
    }
    S.v[j] = vr < S.ver_n ? ld(C.ver_free[(S.ver_h + vr) % C.maxver]) : (int)(S.ver_b0 + vr - S.ver_n);
    if (CHECK) {
        int owner = atomicExch(&C.slab_owner[S.slab[j]], S.v[j]);
        if (owner != (S.app[j] ? S.cur[j] : -1)) check_fail(C, CHK_SLAB_TWICE, S.slab[j], owner, S.v[j]);
        Version pv = load_version_list(C.vers + S.v[j]);
        if (vr < S.ver_n && (pv.dt_max == INF_TS || __ldcg(C.head + pv.x) == S.v[j]))
            check_fail(C, CHK_VERSION_LIVE, S.v[j], pv.x, pv.dt_max);
    }
}

// Merge vertex j's old live entries (of its list, or of its old tail for an append) with its
// insertions into its new run (or new tail), in (neighbour, ct) order (whole warp). Lanes in `mins` insert neighbour y at tau, as the rank-th of the
// vertex's insertions, after every old live entry of a neighbour at or below y: counted
// here, by a vote per insertion on each chunk the merge loads anyway, instead of a binary
// search before it (a dependent load per step). Returns the old live entries.
__device__ int merge_small(const Ctx& C, const SmallShared& S, int j, unsigned mins, int y, int tau,
                           int label, int rank, int lane) {
    const bool my_ins = (mins >> lane) & 1u;
    const i64 off = S.moff[j], noff = S.noff[j];
    const int oldlen = S.mlen[j];
    int carry = 0, before = 0;  // before: my insertion's old live entries at or below y
    constexpr int U = 4;  // chunks loaded at once
    for (int base = 0; base < oldlen; base += 32 * U) {
        Entry e[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int k = base + 32 * u + lane;
            e[u] = k < oldlen ? load_entry(C.entries + off + k) : Entry{0x7fffffff, 0, 0, 0};
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int b0 = base + 32 * u;
            if (b0 >= oldlen) break;  // uniform
            const bool live = b0 + lane < oldlen && e[u].dt == INF_TS;
            const unsigned mlive = __ballot_sync(0xffffffffu, live);
            int below = 0;  // insertions with a smaller neighbour
            for (unsigned m = mins; m; m &= m - 1) {
                const int src = __ffs(m) - 1, ym = __shfl_sync(0xffffffffu, y, src);
                below += ym < e[u].nbr;
                const unsigned at_or_below = __ballot_sync(0xffffffffu, live && e[u].nbr <= ym);
                if (lane == src) before += __popc(at_or_below);
            }
            if (live)
                *reinterpret_cast<int4*>(C.entries + noff + carry + __popc(mlive & lanemask_lt()) + below) =
                    make_int4(e[u].nbr, e[u].elab, e[u].ct, e[u].dt);
            carry += __popc(mlive);
        }
    }
    if (my_ins)
        *reinterpret_cast<int4*>(C.entries + noff + before + rank) = make_int4(y, label, tau, INF_TS);
    return carry;
}

// merge_small for a vertex whose list has a tail: base, tail and insertions into one run
// (whole warp), dead entries kept (a later bulk merge drops them), so that an entry's place
// is its index in its own run plus the other run's entries before it (a base entry goes
// before the tail's entries of its neighbour, they before the insertions'). An insertion
// goes after the old entries [0, above) of the base and [0, above_tail) of the tail.
// Returns the old entries (all of them).
__device__ int merge_small_tail(const Ctx& C, const SmallShared& S, int j, unsigned mins, int y, int tau,
                                int label, int rank, int above, int above_tail, int lane) {
    const i64 off = S.off[j], off2 = S.off2[j], noff = S.noff[j];
    const int n = S.len[j], bl = S.blen[j];
    for (int p0 = 0; p0 < n; p0 += 32) {
        const int p = p0 + lane;
        const Entry e = p < n ? load_entry(C.entries + (p < bl ? off : off2) + p) : Entry{0x7fffffff, 0, 0, 0};
        int below = 0;  // insertions with a smaller neighbour
        for (unsigned m = mins; m; m &= m - 1) below += __shfl_sync(0xffffffffu, y, __ffs(m) - 1) < e.nbr;
        if (p < n) {
            const int other = p < bl ? lower_nbr(C, off2 + bl, n - bl, e.nbr) : lower_nbr(C, off, bl, e.nbr, true);
            *reinterpret_cast<int4*>(C.entries + noff + (p < bl ? p : p - bl) + other + below) =
                make_int4(e.nbr, e.elab, e.ct, e.dt);
        }
    }
    if ((mins >> lane) & 1u)
        *reinterpret_cast<int4*>(C.entries + noff + above + above_tail + rank) = make_int4(y, label, tau, INF_TS);
    return n;
}

// Labels, external ids, the update's count row (as J_HALVES) and its outcome: the pair's
// updates of the batch replayed in order from its state in the graph (as J_CLASSIFY), every
// lane before any edit.
__device__ SmallLane classify_small(const Ctx& C, Batch& B, int nb, int tau0, int lane) {
    SmallLane u = {false, false, -1, -1, 0, tau0 + lane, {0, 0}};
    const bool on = lane < nb;
    if (on) {
        const InRec r = load_rec(B.rec + lane);
        take_record(C, B, r, lane);
        zero_counts(C, u.tau);
        u.a = r.a; u.b = r.b; u.label = r.label; u.ins = r.kind == REC_INSERT;
    }
    const int lo = min(u.a, u.b), hi = max(u.a, u.b);
    // The edge's live entry, searched in the shorter of its endpoints' lists (both hold it,
    // with its label): both heads, then both lengths, are read at once.
    const int vlo = on ? __ldcg(C.head + lo) : -1, vhi = on ? __ldcg(C.head + hi) : -1;
    const int nlo = vlo >= 0 ? __ldcg(&C.vers[vlo].len) : 0, nhi = vhi >= 0 ? __ldcg(&C.vers[vhi].len) : 0;
    const i64 ent = !on ? -1 : nlo <= nhi ? find_live(C, vlo, hi) : find_live(C, vhi, lo);
    bool exists = ent >= 0, mine = false;
    int lab = exists ? __ldcg(&C.entries[ent].elab) : 0;
    for (int k = 0; k < nb; ++k) {
        const int ka = __shfl_sync(0xffffffffu, u.a, k), kb = __shfl_sync(0xffffffffu, u.b, k);
        const int kl = __shfl_sync(0xffffffffu, u.label, k);
        const bool kins = __shfl_sync(0xffffffffu, (int)u.ins, k) != 0;
        if (on && k <= lane && min(ka, kb) == lo && max(ka, kb) == hi) {
            mine = kins != exists;
            if (mine) {
                if (kins) lab = kl;
                exists = kins;
            }
        }
    }
    u.applied = on && mine;
    if (on) set_outcome(C, B, lane, u.applied, lab);
    return u;
}

// Number the distinct vertices the applied updates touch (S.x, S.nv) and give each lane the
// index of its endpoints (u.vi). Whole warp.
__device__ void number_vertices(SmallShared& S, SmallLane& u, int nb, int lane) {
    bool firsts[2] = {u.applied, u.applied};  // the first applied half edge of its vertex
    for (int k = 0; k < nb; ++k) {
        const int ka = __shfl_sync(0xffffffffu, u.a, k), kb = __shfl_sync(0xffffffffu, u.b, k);
        const bool kap = __shfl_sync(0xffffffffu, (int)u.applied, k) != 0;
        if (kap && k < lane)
            for (int s = 0; s < 2; ++s) firsts[s] = firsts[s] && u.end(s) != ka && u.end(s) != kb;
    }
    const unsigned f0 = __ballot_sync(0xffffffffu, firsts[0]);
    const unsigned f1 = __ballot_sync(0xffffffffu, firsts[1]);
    const int at = __popc(f0 & lanemask_lt()) + __popc(f1 & lanemask_lt());
    if (firsts[0]) S.x[at] = u.a;
    if (firsts[1]) S.x[at + firsts[0]] = u.b;
    const int nv = __popc(f0) + __popc(f1);
    if (lane == 0) { S.nv = nv; S.nver = 0; }
    if (lane < NCLASS) S.cnt[lane] = 0;
    __syncwarp();
    for (int s = 0; s < 2; ++s) {
        u.vi[s] = 0;
        if (u.applied)
            while (S.x[u.vi[s]] != u.end(s)) ++u.vi[s];
    }
}

// Vertex lane j: its current version, first insertion, insertions and in-place deletions
// (as J_SEGINFO), its new version's class and ranks.
__device__ void prepare_vertex(const Ctx& C, SmallShared& S, const SmallLane& u, int nb, int j, bool on,
                               int lane) {
    const int x = on ? S.x[j] : -1;
    const int cur = on ? __ldcg(C.head + x) : -1;
    Version ov = {};  // no current version: an empty list
    if (cur >= 0) ov = load_version(C.vers + cur);
    int first = 32, nins = 0, ndel = 0;
    for (int k = 0; k < nb; ++k) {
        const int ka = __shfl_sync(0xffffffffu, u.a, k), kb = __shfl_sync(0xffffffffu, u.b, k);
        const bool kap = __shfl_sync(0xffffffffu, (int)u.applied, k) != 0;
        const bool kins = __shfl_sync(0xffffffffu, (int)u.ins, k) != 0;
        if (!on || !kap || (ka != x && kb != x)) continue;
        if (kins) { if (first == 32) first = k; ++nins; }
        else if (first == 32) ++ndel;
    }
    if (!on) return;
    // Dead-entry count (the in-place deletions of delete_in_place count here).
    if (ndel && cur >= 0) C.vers[cur].ndead = ov.ndead + ndel;
    const bool app = cur >= 0 && appends_tail(ov, nins);
    const int cls = app ? ov.cls : nins ? ceil_log2((unsigned)((ov.len + nins + 31) / 32)) : -1;
    const int tlen = ov.len - ov.blen;
    S.cur[j] = cur; S.first[j] = first; S.off[j] = (i64)ov.slab * 32; S.len[j] = ov.len;
    S.blen[j] = ov.blen; S.off2[j] = S.off[j] + ov.toff - ov.blen;
    S.app[j] = app;
    S.moff[j] = app ? S.off[j] + ov.toff : S.off[j];
    S.mlen[j] = app ? tlen : ov.len;
    S.noff[j] = S.off[j] + ov.toff + tlen;  // an append's (a new run's: place_run)
    // An append keeps the base and its dead entries (ndead an upper bound, as J_ALLOC);
    // merge_small_tail keeps the dead entries of a list with a tail; merge_small drops them.
    S.nins[j] = nins; S.cls[j] = cls; S.ndead[j] = app || ov.len > ov.blen ? ov.ndead + ndel : 0;
    if (cls >= 0) {
        if (!app) S.rank[j] = atomicAdd(&S.cnt[cls], 1);
        S.vrank[j] = atomicAdd(&S.nver, 1);
    }
}

// Updater warp w's share of a short batch's merges: vertices j = w, w + N_UPDATERS, ...,
// each by the whole warp, from the batch's updates as apply_small left them in S. Every
// lane fences after its writes: warp 0 publishes the versions after the next barrier.
__device__ void merge_share(const Ctx& C, SmallShared& S, int w, int lane) {
    const bool on = (S.ins >> lane) & 1u;  // update `lane` is an applied insertion
    const int ka = S.ua[lane], kb = S.ub[lane];
    int chunks = 0;
    for (int j = w; j < S.nmerge; j += N_UPDATERS) {
        if (S.cls[j] < 0) continue;  // uniform
        const int x = S.x[j];
        const int s = kb == x;  // this lane's side at x, if its update touches x
        const bool in_x = on && (s ? kb : ka) == x;
        const unsigned mins = __ballot_sync(0xffffffffu, in_x);
        const int y = s ? ka : kb, tau = S.tau0 + lane, rank = S.urank[s][lane];
        if (CHECK)
            for (int k = lane; k < S.mlen[j] + S.nins[j]; k += 32)
                *reinterpret_cast<int4*>(C.entries + S.noff[j] + k) = make_int4(CHECK_SENTINEL, 0, 0, 0);
        warp_join();
        const int live = S.app[j] || S.blen[j] == S.len[j]
            ? merge_small(C, S, j, mins, y, tau, S.ulab[lane], rank, lane)
            : merge_small_tail(C, S, j, mins, y, tau, S.ulab[lane], rank, S.uabove[s][lane],
                               S.uabove_tail[s][lane], lane);
        if (lane == 0) S.live[j] = live;
        chunks += (S.mlen[j] + 31) / 32;
    }
    if (lane == 0 && chunks) atomicAdd(&S.chunks, chunks);
    if (__any_sync(0xffffffffu, chunks > 0 || w < S.nmerge))
        __threadfence();  // this lane's entries before warp 0 publishes the versions
    warp_join();
}

// The short path's merges on updater warps 1..N_UPDATERS-1: between the two barriers that
// warp 0's apply_small passes (always both, even when its pools failed).
__device__ __noinline__ void small_merges(const Ctx& C, SmallShared& S, int w, int lane) {
    named_barrier_updaters();
    merge_share(C, S, w, lane);
    named_barrier_updaters();
}

// Vertex j's new list, once merged: its new run, or for an append the shared base and the
// new tail (S.live[j] old entries and S.nins[j] insertions at S.noff[j]).
__device__ __forceinline__ Adj new_list(const SmallShared& S, int j) {
    const int n = S.live[j] + S.nins[j];
    Adj a;
    if (S.app[j]) {
        a.off = S.off[j]; a.blen = S.blen[j]; a.len = S.blen[j] + n; a.off2 = S.noff[j] - S.blen[j];
    } else {
        a.off = a.off2 = S.noff[j]; a.len = a.blen = n;
    }
    return a;
}

// Apply batch [tau0, tau0 + nb) (nb <= SMALL_MAX) on updater warp 0, the merges shared with
// the other updater warps (small_merges), through to its work items. Returns false on a
// fatal pool error. Lane 0 times its steps into `cost`. Not inlined: its registers are
// then its own (inlined with the tails, it pushed the persistent kernel's spills from 364
// to 560 bytes; apart, the kernel spills 376 and it 32, nvcc 13.0, sm_90). Every lane has
// passed its last warp_join when any returns.
__device__ __noinline__ bool apply_small(const Ctx& C, Batch& B, SmallShared& S, int nb, int tau0, int lane,
                            SmallCost& cost) {
    SmallLane u = classify_small(C, B, nb, tau0, lane);
    number_vertices(S, u, nb, lane);
    const int nv = S.nv;
    cost.t[0] = gtime();
    // Every vertex at once, 32 at a time: its versions, counts, class; then the pools.
    for (int j0 = 0; j0 < nv; j0 += 32) prepare_vertex(C, S, u, nb, j0 + lane, j0 + lane < nv, lane);
    warp_join();
    int ok = 1;
    if (lane == 0 && S.nver) {
        ok = take_runs(C, S);
        __threadfence();  // the free rings' slots after the tails that cover them
    }
    if (!__shfl_sync(0xffffffffu, ok, 0)) {
        if (lane == 0) S.nmerge = 0;
        named_barrier_updaters();  // the other updater warps wait in small_merges: pass both
        named_barrier_updaters();
        return false;
    }
    warp_join();
    for (int j = lane; j < nv; j += 32)
        if (S.cls[j] >= 0) place_run(C, S, j);
    // Each side of each applied update: deletions before its vertex's first insertion end
    // their entry in place (as J_SEGEDIT); an insertion's rank among its vertex's insertions
    // by (neighbour, update), and, in a list with a tail that merges, the old entries at or
    // below its neighbour (merge_small counts them itself, for a list without a tail and for
    // an append). Both sides' searches run together.
    // The searches run in the base; a list's tail, if any, is searched after.
    int rank[2] = {0, 0}, above[2] = {0, 0}, above_tail[2] = {0, 0}, lo[2], hi[2];
    bool del[2];
    for (int s = 0; s < 2; ++s) {
        const int j = u.vi[s];
        del[s] = u.applied && !u.ins && lane < S.first[j];
        lo[s] = 0;
        const bool tail_merge = !S.app[j] && S.blen[j] < S.len[j];
        hi[s] = del[s] || (u.applied && u.ins && tail_merge) ? S.blen[j] : 0;
    }
#if SEARCH_WAYS == 4
    narrow_both(C, S.off[u.vi[0]], u.other(0), u.ins, lo[0], hi[0],
                S.off[u.vi[1]], u.other(1), u.ins, lo[1], hi[1]);
#endif
    while (lo[0] < hi[0] || lo[1] < hi[1]) {
        int mid[2], nbr[2];
        for (int s = 0; s < 2; ++s) {
            mid[s] = (lo[s] + hi[s]) >> 1;
            nbr[s] = lo[s] < hi[s] ? __ldcg(&C.entries[S.off[u.vi[s]] + mid[s]].nbr) : 0;
        }
        for (int s = 0; s < 2; ++s) {
            if (lo[s] >= hi[s]) continue;
            const int y = u.other(s);  // first entry > y for an insertion, >= y for a deletion
            if (nbr[s] < y || (u.ins && nbr[s] == y)) lo[s] = mid[s] + 1; else hi[s] = mid[s];
        }
    }
    for (int s = 0; s < 2; ++s) {
        const int x = u.end(s), y = u.other(s), j = u.vi[s];
        if (del[s]) {
            i64 ent = scan_find_live(C, S.off[j], lo[s], S.blen[j], y);
            if (ent < 0) ent = run_find_live(C, S.off2[j] + S.blen[j], S.len[j] - S.blen[j], y);
            if (ent >= 0) C.entries[ent].dt = u.tau;
            else if (CHECK) check_fail(C, CHK_DELETE_MISSING, u.tau, x, y);
        }
        if (u.applied && u.ins && !S.app[j] && S.blen[j] < S.len[j]) {
            above[s] = lo[s];
            above_tail[s] = lower_nbr(C, S.off2[j] + S.blen[j], S.len[j] - S.blen[j], y, true);
        }
        for (int k = 0; k < nb; ++k) {
            const int ka = __shfl_sync(0xffffffffu, u.a, k), kb = __shfl_sync(0xffffffffu, u.b, k);
            const bool kin = __shfl_sync(0xffffffffu, (int)(u.applied && u.ins), k) != 0;
            if (!kin || (ka != x && kb != x)) continue;
            const int yk = ka == x ? kb : ka;
            rank[s] += yk < y || (yk == y && k < lane);
        }
    }
    // What the merging warps need of each update (lanes past nb: no update, ends -1).
    S.ua[lane] = u.a; S.ub[lane] = u.b; S.ulab[lane] = u.label;
    for (int s = 0; s < 2; ++s) {
        S.urank[s][lane] = rank[s]; S.uabove[s][lane] = above[s]; S.uabove_tail[s][lane] = above_tail[s];
    }
    const unsigned ins = __ballot_sync(0xffffffffu, u.applied && u.ins);
    if (lane == 0) { S.ins = ins; S.tau0 = tau0; S.nmerge = nv; S.chunks = 0; }
    warp_join();
    cost.t[1] = gtime();
    // The merges, shared with the other updater warps (small_merges): a vertex a warp.
    named_barrier_updaters();
    merge_share(C, S, 0, lane);
    named_barrier_updaters();
    if (lane == 0) cost.chunks = S.chunks;
    cost.t[2] = gtime();
    // Deletions after their vertex's first insertion end their entry in the new version (as
    // J_PUBLISH): in its new run, or in the shared base or the new tail of an append.
    for (int s = 0; s < 2; ++s) {
        const int j = u.vi[s];
        if (!u.applied || u.ins || lane <= S.first[j]) continue;
        const i64 ent = find_at(C, new_list(S, j), u.other(s), u.tau);
        if (CHECK && (ent < 0 || ld(C.entries[ent].dt) != INF_TS))
            check_fail(C, ent < 0 ? CHK_DELETE_MISSING : CHK_DELETE_DEAD, u.tau, u.end(s), u.other(s));
        if (ent >= 0) C.entries[ent].dt = u.tau;
        atomicAdd(&S.ndead[j], 1);
    }
    warp_join();
    // The new versions, then (after a fence) the heads that name them; the versions they
    // replace go to the GC queue.
    const u64 gcq_tail = vload(&C.st->gcq_tail);
    if (lane == 0)
        while (gcq_tail + nv - vload(&C.st->gcq_head) > C.gcq_cap) { relay(C); __nanosleep(1000); }
    for (int j = lane; j < nv; j += 32) {
        if (S.cls[j] < 0) continue;
        const int first_tau = tau0 + S.first[j], len = S.live[j] + S.nins[j], cur = S.cur[j];
        const Adj a = new_list(S, j);
        int4* nv4 = reinterpret_cast<int4*>(C.vers + S.v[j]);
        nv4[0] = make_int4(S.slab[j], a.len, a.blen, (int)(a.off2 + a.blen - a.off));  // struct Version
        nv4[1] = make_int4(first_tau, INF_TS, cur, S.x[j]);
        nv4[2] = make_int4(S.cls[j], S.ndead[j], 0, 0);
        if (cur >= 0) C.vers[cur].dt_max = first_tau - 1;
        if (S.app[j]) C.vers[cur].kept = 1;  // its run is now the new version's
        if (CHECK)
            check_version_whole(C, S.noff[j], len, tau0, S.x[j],
                                1000LL * S.mlen[j] + 1000000LL * S.nins[j]);
    }
    warp_join();
    __threadfence();  // the versions and their entries before the heads that name them
    int npush = 0, napp = 0, nruns = 0;
    for (int j0 = 0; j0 < nv; j0 += 32) {
        const int j = j0 + lane;
        const bool fresh = j < nv && S.cls[j] >= 0, retire = fresh && S.cur[j] >= 0;
        if (fresh) vstore(C.head + S.x[j], S.v[j]);
        const unsigned m = __ballot_sync(0xffffffffu, retire);
        if (retire) C.gcq[(gcq_tail + npush + __popc(m & lanemask_lt())) % C.gcq_cap] = S.cur[j];
        npush += __popc(m);
        const unsigned ma = __ballot_sync(0xffffffffu, fresh && S.app[j]);
        napp += __popc(ma);
        nruns += __popc(__ballot_sync(0xffffffffu, fresh) & ~ma);
    }
    if (lane == 0 && napp) atomicAdd(&C.st->appends, (u64)napp);  // as J_ALLOC counts them
    if (lane == 0 && nruns) atomicAdd(&C.st->new_runs, (u64)nruns);
    warp_join();  // every lane's head and queue slot, not only lane 0's, before the tail
    __threadfence();  // every head published before the versions it replaced are retired
    if (lane == 0 && npush) vstore(&C.st->gcq_tail, gcq_tail + (u64)npush);
    cost.t[3] = gtime();
    // Work items, as the bulk path's last jobs (one task: nb <= 32).
    live_plans(C, tau0, nb, lane);
    task_count(C, B, nb, tau0, 0, lane);
    warp_join();
    if (lane == 0) {
        const u64 end = vload(&C.st->item_reserve) + (u64)vload(&B.ctl.nitems);
        while (end > 0 && vload(&C.item_free[(end - 1) % MAXI]) < (i64)(end - 1)) __nanosleep(200);
    }
    warp_join();
    task_items(C, B, nb, tau0, 0, lane);
    warp_join();
    cost.t[4] = gtime();
    return true;
}
