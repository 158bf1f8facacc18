// collector.cuh -- the garbage-collector warp (section 6): advances the GC pointer over
// completed updates and returns retired versions no running match can read. Buffers:
// gcq (reads what updater jobs appended), slab_free and ver_free rings (pushes; the
// updater pops), slab_owner (CHECK=1: releases), dstat pool statistics (writes).

// ---------------------------------------------------------------------------------------
// Garbage collector (section 6)

// Start of size class cls's free ring in slab_free.
__device__ __forceinline__ u64 class_base(const Ctx& C, int cls) {
    u64 base = 0;
    for (int c = 0; c < cls; ++c) base += C.nslabs >> c;
    return base;
}

__device__ void collector(const Ctx& C, int lane) {
    u64 total_freed = 0;  // kept here: the collector never reads host memory
    u64 g = vload(&C.st->gc_ptr);
    while (true) {
        // The GC pointer passes only completed updates, in tau order (32 checked at once).
        u64 limit = vload(&C.st->next_tau);
        while (g < limit) {
            bool done = g + lane < limit && vload(&C.upd[(g + lane) % MAXU].done) == (i64)(g + lane);
            unsigned m = __ballot_sync(0xffffffffu, done);
            int run = m == 0xffffffffu ? 32 : __ffs(~m) - 1;
            g += run;
            if (run < 32) break;
        }
        if (lane == 0) vstore(&C.st->gc_ptr, g);
        // Retired versions come in (nearly) dt_max order: free the leading run of those no
        // live update can read, 32 at a time.
        u64 h = C.st->gcq_head, t = vload(&C.st->gcq_tail);
        __threadfence();  // the versions behind t (and their dt_max) before reading them
        while (h < t) {
            u64 n = min((u64)32, t - h);
            int v = lane < n ? vload(&C.gcq[(h + lane) % C.gcq_cap]) : -1;
            Version ver;
            bool ok = false;
            if (v >= 0) { ver = load_version(C.vers + v); ok = (u64)ver.dt_max < g; }
            unsigned m = __ballot_sync(0xffffffffu, ok);
            int take = m == 0xffffffffu ? 32 : __ffs(~m) - 1;
            if (take == 0) break;
            bool mine = lane < take;
            int cls = mine ? ver.cls : -1;
            unsigned peers = __match_any_sync(0xffffffffu, cls);
            int leader = __ffs(peers) - 1;
            u64 slab_units = 0;
            if (CHECK && mine) {
                int owner = atomicExch(&C.slab_owner[ver.slab], -1);
                if (owner != v) check_fail(C, CHK_SLAB_OWNER, v, ver.slab, owner);
                if (__ldcg(C.head + ver.x) == v)
                    check_fail(C, CHK_FREE_CURRENT, v, ver.x, ver.dt_max);
            }
            if (mine) {
                u64 ft = C.st->free_tail[cls];  // only the collector writes tails
                int rank = __popc(peers & lanemask_lt());
                C.slab_free[class_base(C, cls) + (ft + rank) % (C.nslabs >> cls)] = ver.slab;
                C.ver_free[(C.st->ver_free_tail + lane) % C.maxver] = v;
                slab_units = 1ULL << cls;
            }
            for (int d = 16; d > 0; d >>= 1) slab_units += __shfl_down_sync(0xffffffffu, slab_units, d);
            __threadfence();
            warp_join();
            if (mine && lane == leader) vstore(&C.st->free_tail[cls], C.st->free_tail[cls] + __popc(peers));
            warp_join();
            if (lane == 0) {
                vstore(&C.st->ver_free_tail, C.st->ver_free_tail + take);
                atomicAdd(&C.st->slabs_in_use, (u64)0 - slab_units);
                atomicAdd(&C.st->versions_in_use, (u64)0 - (u64)take);
            }
            h += take;
            total_freed += take;
            if (take < (int)n) break;
        }
        if (lane == 0) {
            vstore(&C.st->gcq_head, h);
            DevStatus* ds = C.dstat;
            ds->gc_ptr = g;
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
