// updater.cuh -- the graph-updater warps' main loop: take each batch through its jobs,
// allocate versions and slab runs from the pools (warp 0, lane 0), publish, stop.
// Buffers: slab_free/ver_free (pops), st pool counters, batch control fields, dstat.

// Take k units from a free ring [head, tail) and, for the rest, from a bump region; waits
// for the collector while both together hold too few. Returns false when that can never
// end. (updater w0, lane 0)
__device__ bool pop_units(const Ctx& C, int k, u64* head, const u64* tail, u64* bump, u64 bump_cap,
                          u64 unit, u64& ring_h, int& ring_n, u64& bump0) {
    u64 spins = 0;
    while (true) {
        u64 h = *head, avail = vload(tail) - h;
        u64 a = min((u64)k, avail);
        u64 rest = (u64)k - a;
        if ((bump_cap - *bump) / unit >= rest) {
            ring_h = h; ring_n = (int)a; bump0 = *bump;
            *head = h + a;
            *bump += rest * unit;
            return true;
        }
        relay(C);
        if (pool_stuck(C) && ++spins > 100000) return false;
        __nanosleep(1000);  // backpressure: wait for the collector
    }
}

// Take every new version's id and slab run from the pools (updater w0, lane 0; the
// segments then pick theirs by rank in J_ALLOC).
__device__ bool allocate(const Ctx& C) {
    BatchCtl& K = C.batch->ctl;
    int nver = vload(&K.nver);
    if (nver == 0) return true;
    if (!pop_units(C, nver, &C.st->ver_free_head, &C.st->ver_free_tail, &C.st->ver_bump, C.maxver, 1,
                   K.ver_ring_h, K.ver_ring_n, K.ver_bump0)) {
        vstore(&C.dstat->error, (u64)ERR_VERSIONS_EXHAUSTED);
        return false;
    }
    atomicAdd(&C.st->versions_in_use, (u64)nver);
    for (int c = 0; c < NCLASS; ++c) {
        int k = vload(&K.class_cnt[c]);
        if (k == 0) continue;
        if (!pop_units(C, k, &C.st->free_head[c], &C.st->free_tail[c], &C.st->slab_bump, C.bump_cap,
                       1ULL << c, K.ring_h[c], K.ring_n[c], K.bump0[c])) {
            vstore(&C.dstat->error, (u64)ERR_POOL_EXHAUSTED);
            return false;
        }
        atomicAdd(&C.st->slabs_in_use, (u64)k << c);
    }
    if (vload(&K.nchunks) > MAXCHUNK) { vstore(&C.dstat->error, (u64)ERR_CHUNKS); return false; }
    return true;
}

// (slot, plan) pairs of query slots live somewhere in [tau0, tau0 + nb) (updater w0).
__device__ void live_plans(const Ctx& C, int tau0, int nb, int lane) {
    Batch& B = *C.batch;
    int q = lane, np = 0;
    if (q < QMAX) {
        int n = vload(&C.st->q_nplans[q]);
        if (n > 0 && vload(&C.st->q_from[q]) < (i64)tau0 + nb && vload(&C.st->q_until[q]) > (i64)tau0) np = n;
    }
    int incl = np;
    for (int d = 1; d < 32; d <<= 1) {
        int v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    for (int p = 0; p < np; ++p) B.qp[incl - np + p] = (q << 16) | p;
    if (lane == 31) B.ctl.nqp = incl;
    warp_join();
}

// Room in the GC queue for the versions the batch retires, and where they go (updater w0,
// lane 0): waits for the collector while the queue is too full.
__device__ void reserve_gcq(const Ctx& C, Batch& B) {
    u64 tw = gtime(), tl = C.st->gcq_tail, np = (u64)vload(&B.ctl.npush);
    while (tl + np - vload(&C.st->gcq_head) > C.gcq_cap) { relay(C); __nanosleep(1000); }
    B.ctl.gcq_base = tl;
    time_step(C, STEP_GCQ_WAIT, tw);
}

// live_plans, timed by lane 0 when `clock` (updater w0).
__device__ __forceinline__ void timed_live_plans(const Ctx& C, int tau0, int nb, int lane, bool clock) {
    u64 tp = clock ? gtime() : 0;
    live_plans(C, tau0, nb, lane);
    if (clock) time_step(C, STEP_LIVE_PLANS, tp);
}

__device__ void reset_batch_counters(Batch& B, int lane) {
    if (lane < NCLASS) B.ctl.class_cnt[lane] = 0;
    if (lane == 0) {
        BatchCtl& K = B.ctl;
        K.nseg = 0; K.hcur = 0; K.nchunks = 0; K.nins = 0; K.nver = 0; K.npush = 0;
        K.gcpos = 0; K.nqp = 0; K.ncompact = 0; K.nitems = 0;
        if (DELETE_PATH) K.has_ins = 0;
    }
}

// A bulk batch's last steps, once its versions are published (or, a batch of deletions,
// once its entries are ended): room in the item ring, J_ITEMS, the next tau, the batch's
// phase times (t[0..3] taken, t[4] here; updater w0 lane 0 when `clock`), and, for the
// pipeline's batches alone (`learn`), the short path's model of its cost.
__device__ __forceinline__ void finish_batch(const Ctx& C, UpdShared& S, Batch& B, int nb, u64* t, int w, int lane,
                                             bool clock, bool learn) {
    if (clock) {
        // Room in the item ring for the whole batch, so that no helper waits inside
        // J_ITEMS on a slot whose reader is itself helping. Relaying meanwhile: the
        // executors that must free the slots may be waiting for output ring room.
        u64 tr = gtime(), end = vload(&C.st->item_reserve) + (u64)vload(&B.ctl.nitems);
        while (end > 0 && vload(&C.item_free[(end - 1) % MAXI]) < (i64)(end - 1)) {
            relay(C);
            __nanosleep(500);
        }
        time_step(C, STEP_ITEM_ROOM, tr);
    }
    job(C, J_ITEMS, cdiv(nb, 32), w, lane);
    if (w == 0) {
        relay(C);
        if (lane == 0) vstore(&C.st->next_tau, (u64)(S.tau0 + nb));
    }
    if (clock) {
        t[4] = gtime();
        C.st->phase_ns[0] += t[0] - S.first_seen;
        for (int k = 1; k < 5; ++k) C.st->phase_ns[k] += t[k] - t[k - 1];
        C.st->batches += 1;
        C.st->batched_updates += nb;
        if (learn && nb <= SMALL_MAX) ewma(C.st->model_bulk_ns, t[4] - t[0]);
    }
}

// A bulk batch of deletions alone (DELETE_PATH, layout.cuh): each half edge finds its entry
// and the smaller endpoint's takes the first deletion's tau (J_CLASSIFY's kind), then each
// update's outcome, the other entry, dead counts and items (J_COUNT's kind), then J_ITEMS.
// Timed as the bulk path's phases: classify (t[0..1]), none, none, count (t[2..3]), items.
__device__ void apply_deletions(const Ctx& C, UpdShared& S, Batch& B, int nb, int w, int lane, bool clock) {
    u64 t[5];
    t[0] = clock ? gtime() : 0;
    job(C, J_CLASSIFY, cdiv(2 * nb, 32), w, lane);
    t[1] = t[2] = clock ? gtime() : 0;
    if (w == 0) timed_live_plans(C, S.tau0, nb, lane, clock);
    job(C, J_COUNT, cdiv(nb, 32), w, lane);
    t[3] = clock ? gtime() : 0;
    finish_batch(C, S, B, nb, t, w, lane, clock, false);  // not the pipeline's cost
}

__device__ void updater(const Ctx& C, int w, int lane) {
    __shared__ UpdShared S;
    __shared__ SmallShared SS;
    Batch& B = *C.batch;
    if (w == 0 && lane == 0) {
        S.fatal = 0;
        S.no_run_at = ~0ULL;
        C.dstat->clock_ns = gtime();
        if (RECORD_SM) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            C.dstat->updater_sm = 1 + (u64)sm;
        }
        C.dstat->running = 1;
        __threadfence_system();
    }
    const bool clock = w == 0 && lane == 0;
    while (true) {
        if (w == 0) {
            reset_batch_counters(B, lane);
            if (clock) S.t_in = gtime();
            form_batch(C, S, lane);
        }
        if (BULK_MIN) {
            named_barrier_updaters();
            if (S.run_n > 0) {  // a long run of records: J_READ (READ_JOB), or the updater warps
#if READ_JOB
                job_body(C, J_READ, cdiv(S.run_n, RUN_PART), w, lane);  // ends with a barrier
                if (w == 0 && lane == 0) S.run_stop = ld(B.run_stop);
#else
                for (int t = w; t < cdiv(S.run_n, RUN_PART); t += N_UPDATERS)
                    read_run(C, S.run_n, S.nb, S.run_pos, S.run_mirror, &S.run_stop, t, lane);
                __threadfence();
                named_barrier_updaters();
#endif
                if (w == 0) take_run(C, S, lane);
                if (clock) time_step(C, STEP_INPUT_RUN, S.closed);
            }
        }
        if (w == 0) {
            if (clock && S.nb > 0) {  // waiting for input, then reading it
                C.st->step_ns[STEP_INPUT_WAIT] += S.read_from - S.t_in - S.wait_slots;
                C.st->step_ns[STEP_INPUT_SLOTS] += S.wait_slots;
                C.st->step_ns[STEP_SLOTS_RUNNING] += S.wait_running;
                C.st->step_ns[STEP_SLOTS_GC] += S.wait_gc;
                C.st->step_ns[STEP_INPUT_READ] += S.closed - S.read_from;
            }
            if (lane == 0 && S.nb > 0) vstore(&C.st->batch_no, vload(&C.st->batch_no) + 1);
            const bool small = S.nb > 0 && choose_small(C, S, S.nb, vload(&C.st->hold) != 0, lane);
            if (lane == 0) S.small = small;
            warp_join();
        }
        named_barrier_updaters();
        int nb = S.nb, stop = S.stop;
        if (nb > 0 && S.small) {
            if (w == 0) {
                const u64 t0 = clock ? gtime() : 0;
                SmallCost cost = {0, {0, 0, 0, 0, 0}};
                const bool ok = apply_small(C, B, SS, nb, S.tau0, lane, cost);
                relay(C);
                if (lane == 0) {
                    S.fatal = !ok;
                    vstore(&C.st->next_tau, (u64)(S.tau0 + nb));
                    const u64 t1 = gtime();
                    C.st->phase_ns[0] += t0 - S.first_seen;
                    C.st->phase_ns[1] += cost.t[3] - t0;
                    C.st->phase_ns[4] += t1 - cost.t[3];
                    C.st->step_ns[STEP_SMALL] += t1 - t0;
                    C.st->batches += 1;
                    C.st->batched_updates += nb;
                    learn_small(*C.st, nb, t0, cost);
                }
                warp_join();
            } else {
                small_merges(C, SS, w, lane);  // this warp's share of the batch's merges
            }
        } else if (nb > 0 && deletions_only(B)) {
            apply_deletions(C, S, B, nb, w, lane, clock);
        } else if (nb > 0) {
            u64 t[5];
            t[0] = clock ? gtime() : 0;
            int nht = cdiv(2 * nb, 32);
            job(C, J_HALVES, cdiv(nb, 32), w, lane);
            if (!FUSE_HALVES_COUNT) job(C, J_SEGCOUNT, nht, w, lane);
            int nseg = vload(&B.ctl.nseg), nst = cdiv(nseg, 32);
            if (!FUSE_SEGSTART_PLACE) job(C, J_SEGSTART, nst, w, lane);
            job(C, J_PLACE, nht, w, lane);
            job(C, J_ORDER, nht, w, lane);
            job(C, J_CLASSIFY, cdiv(PRE_ENT ? 2 * nb : nb, 32), w, lane);  // PRE_ENT: per half edge
            job(C, J_SEGINFO, nst, w, lane);
#if !FUSE_EDIT_ALLOC
            job(C, J_SEGEDIT, nht, w, lane);
#endif
            if (clock) {  // from J_SEGINFO's counts (nver, class_cnt, nchunks) alone
                u64 ta = gtime();
                S.fatal = !allocate(C);
                time_step(C, STEP_ALLOCATE, ta);
            }
            named_barrier_updaters();
            if (S.fatal) break;
#if FUSE_EDIT_ALLOC
            job(C, J_SEGEDIT, nht + nst, w, lane);  // its last nst tasks are J_ALLOC's
#else
            job(C, J_ALLOC, nst, w, lane);
#endif
            t[1] = clock ? gtime() : 0;
            int nchunks = vload(&B.ctl.nchunks);
            const bool compact = vload(&B.ctl.ncompact) > 0;
            if (compact) job(C, J_MASK, cdiv(nchunks, MASK_UNROLL), w, lane);
            if (compact || !FUSE_ALLOC_SCAN) job(C, J_SCAN, nst, w, lane);
#if FUSE_COPY_PUBLISH
            // J_COPY publishes each segment it completes and runs J_COUNT's tasks too.
            if (clock) reserve_gcq(C, B);
            if (w == 0) timed_live_plans(C, S.tau0, nb, lane, clock);
            job(C, J_COPY, cdiv(nchunks, COPY_UNROLL) + cdiv(vload(&B.ctl.nins), 32) + cdiv(nb, 32), w, lane);
            t[2] = clock ? gtime() : 0;
#else
            job(C, J_COPY, cdiv(nchunks, COPY_UNROLL) + cdiv(vload(&B.ctl.nins), 32), w, lane);
            t[2] = clock ? gtime() : 0;
            if (clock) reserve_gcq(C, B);
#if FUSE_PUBLISH_COUNT
            if (w == 0) timed_live_plans(C, S.tau0, nb, lane, clock);  // from form_batch's query state alone
            job(C, J_PUBLISH, nht + nst + cdiv(nb, 32), w, lane);  // its last tasks are J_COUNT's
#else
            job(C, J_PUBLISH, nht + nst, w, lane);
#endif
#endif
            if (CHECK) job(C, J_VERIFY, nst, w, lane);
            if (clock) vstore(&C.st->gcq_tail, C.st->gcq_tail + (u64)vload(&B.ctl.npush));
            t[3] = clock ? gtime() : 0;
#if !FUSE_PUBLISH_COUNT
            if (w == 0) timed_live_plans(C, S.tau0, nb, lane, clock);
            job(C, J_COUNT, cdiv(nb, 32), w, lane);
#endif
            finish_batch(C, S, B, nb, t, w, lane, clock, true);
        }
        named_barrier_updaters();
        if (stop || S.fatal) break;
    }
    if (w == 0) {
        // Drain: every published update completes before the others are told to stop.
        if (lane == 0) {
            while (!S.fatal && vload(&C.st->completed) < vload(&C.st->next_tau) - 1) {
                relay(C);
                __nanosleep(1000);
            }
            __threadfence();
            vstore(&C.st->stop, 1ULL);
            C.dstat->running = 0;
            __threadfence_system();
        }
        warp_join();
    }
}
