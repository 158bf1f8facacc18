// updater_small.cuh -- the short path: a batch of at most SMALL_MAX updates applied by
// updater warp 0 alone, one lane per update, with no job posted (issue 13, item 1). At low
// update rates a batch holds one or two updates, and the job pipeline's fixed cost (fifteen
// jobs, each a fence and two barriers) is the whole of its time; here the same edits take a
// few dependent reads per touched vertex. Semantics are the bulk path's exactly: the same
// outcomes, in-place deletions before a vertex's first insertion, one new version per vertex
// with an applied insertion (its old live entries merged with the insertions, dead ones
// dropped), deletions after the first insertion ended in the new version, the old version
// retired to the GC queue once the new one is published.
//
// Buffers: batch rec (reads), outcome/elab/nitems/len_a/len_b (writes, each lane its own
// update's), vlab/ext (writes), head (reads, publishes), vers and entries (new versions,
// dt edits), slab_free/ver_free (pops, as `allocate`), gcq (appends), st.small_* and
// st.model_* (updater w0, lane 0), then J_COUNT's and J_ITEMS's task functions for
// upd/upd_count/items.
//
// Which path a batch takes is decided by measured cost (choose_small): the short path's cost
// is modelled as model_update_ps per update plus model_chunk_ps per 32 old entries it copies,
// the bulk path's as the mean time of its batches of at most SMALL_MAX updates; every
// SMALL_PROBE-th eligible batch takes the other path, so both estimates stay measured.

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

// Chunks of 32 old entries the short path would copy: both endpoints' current versions
// (a vertex touched twice counts twice; an estimate). Whole warp; every lane gets the sum.
__device__ int small_chunks(const Ctx& C, const Batch& B, int nb, int lane) {
    int chunks = 0;
    if (lane < nb) {
        const int ends[2] = {ld(B.rec[lane].a), ld(B.rec[lane].b)};
        for (int s = 0; s < 2; ++s) {
            int v = __ldcg(C.head + ends[s]);
            if (v >= 0) chunks += (__ldcg(&C.vers[v].len) + 31) / 32;
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
        if (st.model_update_ps == 0) {
            st.model_update_ps = SMALL_UPDATE_PS0;
            st.model_chunk_ps = SMALL_CHUNK_PS0;
            st.model_bulk_ns = BULK_NS0;
        }
        const u64 predicted_ns = (nb * st.model_update_ps + chunks * st.model_chunk_ps) / 1000;
        small = SMALL_PATH == 2 || predicted_ns < st.model_bulk_ns;
        if (++st.small_probe % SMALL_PROBE == 0) small = !small;
        S.chunks = chunks;
    }
    return __shfl_sync(0xffffffffu, small, 0) != 0;
}

// A version id and a slab run of class cls for one new version (updater w0, lane 0).
__device__ bool take_run(const Ctx& C, int cls, int& v, int& slab) {
    State* st = C.st;
    u64 h, b0;
    int n;
    if (!pop_units(C, 1, &st->ver_free_head, &st->ver_free_tail, &st->ver_bump, C.maxver, 1, h, n, b0)) {
        vstore(&C.dstat->error, (u64)ERR_VERSIONS_EXHAUSTED);
        return false;
    }
    __threadfence();  // the ring slot after the tail that covers it
    v = n ? ld(C.ver_free[h % C.maxver]) : (int)b0;
    atomicAdd(&st->versions_in_use, 1ULL);
    if (!pop_units(C, 1, &st->free_head[cls], &st->free_tail[cls], &st->slab_bump, C.nslabs, 1ULL << cls,
                   h, n, b0)) {
        vstore(&C.dstat->error, (u64)ERR_POOL_EXHAUSTED);
        return false;
    }
    __threadfence();
    slab = n ? ld(C.slab_free[class_base(C, cls) + h % (C.nslabs >> cls)]) : (int)b0;
    atomicAdd(&st->slabs_in_use, 1ULL << cls);
    if (CHECK) {
        int owner = atomicExch(&C.slab_owner[slab], v);
        if (owner != -1) check_fail(C, CHK_SLAB_TWICE, slab, owner, v);
        Version pv = load_version(C.vers + v);
        if (n && (pv.dt_max == INF_TS || __ldcg(C.head + pv.x) == v))
            check_fail(C, CHK_VERSION_LIVE, v, pv.x, pv.dt_max);
    }
    return true;
}

// Where a short batch's time went (updater w0, lane 0): the merges, the chunks they copied,
// and when the graph edits ended (the items follow).
struct SmallCost { u64 copy_ns; int chunks; u64 t_edit; };

// Update the cost models with a short batch of nb updates that began at t0 (w0, lane 0).
__device__ void learn_small(State& st, int nb, u64 t0, const SmallCost& cost) {
    const u64 total = gtime() - t0;
    if (cost.chunks > 0) ewma(st.model_chunk_ps, cost.copy_ns * 1000 / cost.chunks);
    ewma(st.model_update_ps, (total - cost.copy_ns) * 1000 / nb);
    st.small_batches += 1;
    st.small_updates += nb;
}

// One lane per update of the batch: what the short path knows about it.
struct SmallLane {
    bool applied, ins;
    int a, b, label, tau;
};

// Merge x's old live entries [off, off + oldlen) with the insertions of the lanes in `mins`
// (neighbour y, at tau) into the run at noff, in (neighbour, ct) order (whole warp). Returns
// the number of old live entries.
__device__ int merge_small(const Ctx& C, int off, int oldlen, int noff, unsigned mins, int y, int tau,
                           int label, int lane) {
    const bool my_ins = (mins >> lane) & 1u;
    // The insertion's rank among the vertex's insertions by (neighbour, update), and the
    // old entries at or below its neighbour (it goes after live ones of the same neighbour).
    int rank = 0;
    for (unsigned m = mins; m; m &= m - 1) {
        const int k = __ffs(m) - 1, yk = __shfl_sync(0xffffffffu, y, k);
        rank += yk < y || (yk == y && k < lane);
    }
    const int above = my_ins ? lower_nbr(C, off, oldlen, y, true) : 0;
    int carry = 0, before = -1;
    constexpr int U = 4;  // chunks loaded at once
    for (int base = 0; base < oldlen; base += 32 * U) {
        Entry e[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int j = base + 32 * u + lane;
            e[u] = j < oldlen ? load_entry(C.entries + off + j) : Entry{0x7fffffff, 0, 0, 0};
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int b0 = base + 32 * u;
            if (b0 >= oldlen) break;  // uniform
            const bool live = b0 + lane < oldlen && e[u].dt == INF_TS;
            const unsigned mlive = __ballot_sync(0xffffffffu, live);
            int below = 0;  // insertions with a smaller neighbour
            for (unsigned m = mins; m; m &= m - 1) below += __shfl_sync(0xffffffffu, y, __ffs(m) - 1) < e[u].nbr;
            if (live)
                *reinterpret_cast<int4*>(C.entries + noff + carry + __popc(mlive & lanemask_lt()) + below) =
                    make_int4(e[u].nbr, e[u].elab, e[u].ct, e[u].dt);
            if (my_ins && before < 0 && above < b0 + 32)
                before = carry + __popc(mlive & ((1u << (above - b0)) - 1u));
            carry += __popc(mlive);
        }
    }
    if (my_ins && before < 0) before = carry;  // after every old entry
    if (my_ins)
        *reinterpret_cast<int4*>(C.entries + noff + before + rank) = make_int4(y, label, tau, INF_TS);
    return carry;
}

// Apply the batch's updates to vertex x's neighbour array (whole warp; `in_x`: this lane's
// update is applied and touches x, whose other endpoint is y). Appends the version it
// retires to the GC queue at gcq_tail + npush. Returns false on a fatal pool error.
__device__ bool apply_small_vertex(const Ctx& C, const SmallLane& u, int x, bool in_x, int y, int tau0,
                                   u64 gcq_tail, int& npush, SmallCost& cost, int lane) {
    const unsigned mins = __ballot_sync(0xffffffffu, in_x && u.ins);
    const int first = mins ? __ffs(mins) - 1 : 32;  // the first applied insertion's update
    const int cur = __ldcg(C.head + x);
    Version ov = {0, 0, 0, 0, 0, -1, 0, x};
    if (cur >= 0) ov = load_version(C.vers + cur);
    // Deletions before the first insertion end their entry in place (as J_SEGEDIT).
    const bool del_before = in_x && !u.ins && lane < first;
    if (del_before) {
        const int ent = find_live(C, cur, y);
        if (ent >= 0) C.entries[ent].dt = u.tau;
        else if (CHECK) check_fail(C, CHK_DELETE_MISSING, u.tau, x, y);
    }
    const int ndel = __popc(__ballot_sync(0xffffffffu, del_before));
    if (ndel && cur >= 0 && lane == 0) C.vers[cur].ndead = ov.ndead + ndel;
    if (!mins) return true;

    const int nins = __popc(mins), first_tau = tau0 + first;
    const int cls = ceil_log2((unsigned)((ov.len + nins + 31) / 32));
    int v = 0, slab = 0, ok = 1;
    if (lane == 0) ok = take_run(C, cls, v, slab);
    if (!__shfl_sync(0xffffffffu, ok, 0)) return false;
    v = __shfl_sync(0xffffffffu, v, 0);
    slab = __shfl_sync(0xffffffffu, slab, 0);
    const int noff = slab * 32;
    if (CHECK)
        for (int k = lane; k < ov.len + nins; k += 32)
            *reinterpret_cast<int4*>(C.entries + noff + k) = make_int4(CHECK_SENTINEL, 0, 0, 0);
    warp_join();
    const u64 tc = lane == 0 ? gtime() : 0;
    const int live = merge_small(C, ov.slab * 32, ov.len, noff, mins, y, u.tau, u.label, lane);
    if (lane == 0) { cost.copy_ns += gtime() - tc; cost.chunks += (ov.len + 31) / 32; }
    const int len = live + nins;
    warp_join();  // the merged run before it is searched
    // Deletions after the first insertion end their entry in the new version (as J_PUBLISH).
    const bool del_after = in_x && !u.ins && lane > first;
    if (del_after) {
        const int ent = find_at(C, noff, len, y, u.tau);
        if (CHECK && (ent < 0 || ld(C.entries[ent].dt) != INF_TS))
            check_fail(C, ent < 0 ? CHK_DELETE_MISSING : CHK_DELETE_DEAD, u.tau, x, y);
        if (ent >= 0) C.entries[ent].dt = u.tau;
    }
    const int ndead = __popc(__ballot_sync(0xffffffffu, del_after));
    if (lane == 0) {
        int4* nv = reinterpret_cast<int4*>(C.vers + v);
        nv[0] = make_int4(slab, len, cls, first_tau);
        nv[1] = make_int4(INF_TS, cur, ndead, x);
        if (cur >= 0) C.vers[cur].dt_max = first_tau - 1;
    }
    warp_join();
    if (CHECK && lane == 0) check_version_whole(C, noff, len, tau0, x, 1000LL * ov.len + 1000000LL * nins);
    __threadfence();  // the version and its entries before the head that names it
    if (lane == 0) {
        vstore(C.head + x, v);
        if (cur >= 0) C.gcq[(gcq_tail + npush) % C.gcq_cap] = cur;
    }
    npush += cur >= 0;
    return true;
}

// Apply batch [tau0, tau0 + nb) (nb <= SMALL_MAX) on updater warp 0 alone, through to its
// work items. Returns false on a fatal pool error. Lane 0 times it into `cost`.
__device__ bool apply_small(const Ctx& C, Batch& B, int nb, int tau0, int lane, SmallCost& cost) {
    SmallLane u = {false, false, -1, -1, 0, tau0 + lane};
    const bool on = lane < nb;
    if (on) {
        // Labels, external ids, the update's count row (as J_HALVES).
        const InRec r = load_rec(B.rec + lane);
        C.vlab[r.a] = r.a_label;
        C.vlab[r.b] = r.b_label;
        C.ext[r.a] = r.ext_a;
        C.ext[r.b] = r.ext_b;
        B.nitems[lane] = 0;
        const size_t slot = (size_t)(u.tau % MAXU) * QMAX;
        for (int q = 0; q < QMAX; ++q) C.upd_count[slot + q] = 0;
        u.a = r.a; u.b = r.b; u.label = r.label; u.ins = r.kind == REC_INSERT;
    }
    // Outcome: the pair's updates of the batch replayed in order from its state in the
    // graph (as J_CLASSIFY), every lane before any edit.
    const int lo = min(u.a, u.b), hi = max(u.a, u.b);
    const int ent = on ? find_live(C, __ldcg(C.head + lo), hi) : -1;
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
    if (on) {
        const int outcome = u.applied ? OUT_APPLIED : OUT_NOOP;
        B.outcome[lane] = outcome;
        B.elab[lane] = lab;
        if (CHECK) B.outcome_shadow[lane] = ((int)vload(&C.st->batch_no) << 4) | outcome;
    }
    // Room in the GC queue for every version the batch may retire (two per update).
    const u64 gcq_tail = vload(&C.st->gcq_tail);
    if (lane == 0)
        while (gcq_tail + 2 * nb - vload(&C.st->gcq_head) > C.gcq_cap) { relay(C); __nanosleep(1000); }
    warp_join();
    // Each touched vertex in turn, the whole warp on its array.
    unsigned todo_a = __ballot_sync(0xffffffffu, u.applied), todo_b = todo_a;
    int npush = 0;
    while (todo_a | todo_b) {
        const bool side_a = todo_a != 0;
        const int src = __ffs(side_a ? todo_a : todo_b) - 1;
        const int x = __shfl_sync(0xffffffffu, side_a ? u.a : u.b, src);
        todo_a &= ~__ballot_sync(0xffffffffu, u.applied && u.a == x);
        todo_b &= ~__ballot_sync(0xffffffffu, u.applied && u.b == x);
        const bool in_x = u.applied && (u.a == x || u.b == x);
        if (!apply_small_vertex(C, u, x, in_x, u.a == x ? u.b : u.a, tau0, gcq_tail, npush, cost, lane))
            return false;
    }
    __threadfence();  // every head published before the versions it replaced are retired
    if (lane == 0 && npush) vstore(&C.st->gcq_tail, gcq_tail + (u64)npush);
    cost.t_edit = gtime();
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
    return true;
}
