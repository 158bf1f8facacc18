// collector.cuh -- the garbage-collector warp (section 6): advances the GC pointer over
// completed updates and returns retired versions no running match can read. Buffers:
// gcq (reads what updater jobs appended), slab_free and ver_free rings (pushes; the
// updater pops), slab_owner (CHECK=1: releases), dstat pool statistics (writes); in shared
// memory, ftail: the free rings' tails as the collector writes them (published each round).

// ---------------------------------------------------------------------------------------
// Garbage collector (section 6)

// Start of size class cls's free ring in slab_free.
__device__ __forceinline__ u64 class_base(const Ctx& C, int cls) {
    u64 base = 0;
    for (int c = 0; c < cls; ++c) base += C.nslabs >> c;
    return base;
}

// One round of the collector: of the n (<= 32 * GC_ROUND) retired versions waiting at gcq[h..],
// the leading run that no live update can read (dt_max < g) goes back to the free rings:
// their slab runs to their size class's ring (not a `kept` version's: its run is its
// successor's), their ids to ver_free. Entry 32k + lane is lane's k-th; all loads are
// issued before any is used. ftail (shared memory, NCLASS) holds each class's free-ring
// tail as the collector, its only writer, last published it. Returns how many it freed.
__device__ u64 free_round(const Ctx& C, u64 h, u64 n, u64 g, int lane, u64* ftail) {
    int v[GC_ROUND];
#pragma unroll
    for (int k = 0; k < GC_ROUND; ++k)
        v[k] = (u64)(32 * k + lane) < n ? vload(&C.gcq[(h + 32 * k + lane) % C.gcq_cap]) : -1;
    int slab[GC_ROUND], cls[GC_ROUND];
    u64 take = 0;
    bool open = true;  // every entry before this round's k was freeable
#pragma unroll
    for (int k = 0; k < GC_ROUND; ++k) {
        bool ok = false;
        slab[k] = -1; cls[k] = -1;
        if (v[k] >= 0) {
            const Version ver = load_version(C.vers + v[k]);
            ok = (u64)ver.dt_max < g;
            if (!ver.kept) { slab[k] = ver.slab; cls[k] = ver.cls; }
        }
        const unsigned m = __ballot_sync(0xffffffffu, ok);
        if (open) take += m == 0xffffffffu ? 32 : __ffs(~m) - 1;
        open = open && m == 0xffffffffu;
    }
    if (take == 0) return 0;
    u64 slab_units = 0;
#pragma unroll
    for (int k = 0; k < GC_ROUND; ++k) {
        if ((u64)(32 * k) >= take) break;
        const bool mine = (u64)(32 * k + lane) < take;
        const int c = mine ? cls[k] : -1;
        const unsigned peers = __match_any_sync(0xffffffffu, c);
        if (CHECK && mine) {
            const Version ver = load_version(C.vers + v[k]);
            int owner = ver.kept ? __ldcg(&C.slab_owner[ver.slab]) : atomicExch(&C.slab_owner[ver.slab], -1);
            if ((owner == v[k]) == (bool)ver.kept) check_fail(C, CHK_SLAB_OWNER, v[k], ver.slab, owner);
            if (__ldcg(C.head + ver.x) == v[k]) check_fail(C, CHK_FREE_CURRENT, v[k], ver.x, ver.dt_max);
        }
        if (mine) {
            const int rank = __popc(peers & lanemask_lt());
            if (c >= 0) {
                C.slab_free[class_base(C, c) + (ftail[c] + rank) % (C.nslabs >> c)] = slab[k];
                slab_units += 1ULL << c;
            }
            C.ver_free[(C.st->ver_free_tail + 32 * k + lane) % C.maxver] = v[k];
        }
        warp_join();  // every lane has read ftail before its class's leader moves it
        if (mine && c >= 0 && lane == __ffs(peers) - 1) ftail[c] += __popc(peers);
        warp_join();
    }
    for (int d = 16; d > 0; d >>= 1) slab_units += __shfl_down_sync(0xffffffffu, slab_units, d);
    __threadfence();  // the ring entries before the tails that hand them out
    warp_join();
    if (lane < NCLASS && ftail[lane] != C.st->free_tail[lane]) vstore(&C.st->free_tail[lane], ftail[lane]);
    if (lane == 0) {
        vstore(&C.st->ver_free_tail, C.st->ver_free_tail + take);
        atomicAdd(&C.st->slabs_in_use, (u64)0 - slab_units);
        atomicAdd(&C.st->versions_in_use, (u64)0 - take);
    }
    warp_join();
    return take;
}

// The GC pointer past the completed updates that follow g, in tau order (32 * GC_ROUND
// checked a round, update g + 32k + lane as lane's k-th, all loads issued before any is
// used), published for the updater (slot_free). Whole warp; returns the new pointer.
__device__ __noinline__ u64 pass_completed(const Ctx& C, u64 g, int lane) {
    const u64 limit = vload(&C.st->next_tau);
    while (g < limit) {
        bool done[GC_ROUND];
#pragma unroll
        for (int k = 0; k < GC_ROUND; ++k) {
            const u64 tau = g + 32 * k + lane;
            done[k] = tau < limit && vload(&C.upd[tau % MAXU].done) == (i64)tau;
        }
        u64 run = 0;
        bool open = true;  // every update before this k was done
#pragma unroll
        for (int k = 0; k < GC_ROUND; ++k) {
            const unsigned m = __ballot_sync(0xffffffffu, done[k]);
            if (open) run += m == 0xffffffffu ? 32 : __ffs(~m) - 1;
            open = open && m == 0xffffffffu;
        }
        g += run;
        if (!open) break;
    }
    if (lane == 0) vstore(&C.st->gc_ptr, g);
    return g;
}

__device__ void collector(const Ctx& C, int lane) {
    __shared__ u64 ftail[NCLASS];  // the free rings' tails (only the collector writes them)
    if (lane < NCLASS) ftail[lane] = C.st->free_tail[lane];
    warp_join();
    u64 total_freed = 0;  // kept here: the collector never reads host memory
    u64 g = vload(&C.st->gc_ptr);
    while (true) {
        g = pass_completed(C, g, lane);
        // What DevStatus reports: every version retired by an update below g_seen is queued
        // below t (a batch queues them before its updates can complete), so gc_ptr past the
        // host's last update with gc_queue 0 means all of them are freed (wait_collected).
        const u64 g_seen = g;
        // Retired versions come in (nearly) dt_max order: free the leading run of those no
        // live update can read.
        u64 h = C.st->gcq_head, t = vload(&C.st->gcq_tail);
        __threadfence();  // the versions behind t (and their dt_max) before reading them
        while (h < t) {
            const u64 n = min((u64)(32 * GC_ROUND), t - h);
            const u64 took = free_round(C, h, n, g, lane, ftail);
            h += took;
            total_freed += took;
            if (took < n) break;
            if (GC_EAGER && h < t) g = pass_completed(C, g, lane);  // layout.cuh
        }
        if (lane == 0) {
            vstore(&C.st->gcq_head, h);
            DevStatus* ds = C.dstat;
            ds->gc_ptr = g_seen;
            ds->slabs_in_use = vload(&C.st->slabs_in_use);
            ds->versions_in_use = vload(&C.st->versions_in_use);
            ds->completed = vload(&C.st->completed);
            ds->gc_freed = total_freed;
            ds->gc_queue = t - h;  // versions still waiting in the GC queue
            ds->donated = vload(&C.st->donated);
            ds->slab_bump = vload(&C.st->slab_bump);
        }
        warp_join();
        int stop = __shfl_sync(0xffffffffu, (int)vload(&C.st->stop), 0);
        if (stop) return;
        __nanosleep(2000);
    }
}
