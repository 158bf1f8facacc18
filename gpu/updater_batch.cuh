// updater_batch.cuh -- graph-updater warp 0: relaying host counters, forming batches from
// the input ring (the only reader of host memory), applying control records. Buffers:
// in_ring and hctl (reads), batch control fields and records (writes), st counters.

// ---------------------------------------------------------------------------------------
// Graph updater (section 5): batch forming and allocation on warp 0, everything else as
// jobs over all warps that are free.

// Copy the host's consumption counters into device memory (only warp 0, lane 0 reads host
// memory).
__device__ __forceinline__ void relay(const Ctx& C) {
    if ((threadIdx.x & 31) != 0) return;
    vstore(&C.st->out_consumed, vload(&C.hctl->out_consumed));
    vstore(&C.st->done_consumed, vload(&C.hctl->done_consumed));
}

// True when nothing can ever be freed again: no retired version waits for the collector and
// no update is still running. A pool that is empty then stays empty: fatal, not a hang.
__device__ bool pool_stuck(const Ctx& C) {
    u64 pending_gc = vload(&C.st->gcq_tail) - vload(&C.st->gcq_head);
    u64 running = vload(&C.st->next_tau) - 1 - vload(&C.st->completed);
    return pending_gc == 0 && running == 0;
}

__device__ __forceinline__ int ceil_log2(unsigned x) { return x <= 1 ? 0 : 32 - __clz(x - 1); }

__device__ __forceinline__ int half_x(u64 h) { return (int)(h >> 32); }
__device__ __forceinline__ int half_i(u64 h) { return (int)((h >> 1) & 0x7fff); }
__device__ __forceinline__ int half_side(u64 h) { return (int)(h & 1); }
// The other endpoint of half edge h.
__device__ __forceinline__ int half_y(const Batch& B, u64 h) {
    const InRec& r = B.rec[half_i(h)];
    return half_side(h) ? ld(r.a) : ld(r.b);
}
// Was update i of the batch applied? With CHECK=1 the outcome is cross-checked against the
// shadow copy J_CLASSIFY wrote beside it; `job` names the reader in a violation.
__device__ bool applied(const Ctx& C, const Batch& B, int i, int job) {
    int o = ld(B.outcome[i]);
    if (CHECK) {
        int sh = ld(B.outcome_shadow[i]), bno = (int)vload(&C.st->batch_no);
        if ((sh >> 4) != bno) check_fail(C, CHK_STALE_OUTCOME, job, i, sh >> 4);
        else if ((sh & 15) != o) check_fail(C, CHK_OUTCOME_DRIFT, job, i, o + 10 * (sh & 15));
    }
    return o == OUT_APPLIED;
}
__device__ __forceinline__ bool is_insert(const Batch& B, int i) { return ld(B.rec[i].kind) == REC_INSERT; }

// Small state of the updater warps (shared memory of block 0; warp 0 writes).
struct UpdShared {
    int nb, stop, fatal;
    int tau0;
    u64 first_seen;              // %globaltimer when the batch's first record was read
    int small;                   // 1: this batch takes the short path (updater_small.cuh)
    int chunks;                  // its old chunks, as choose_small estimated them
};

// A long run of records waiting (a backlog, or a whole apply call's updates): RING_WIDE
// records a lane in one round trip to host memory, taken when they are all updates and the
// batch and the update slots have room for all of them (else the caller reads 32 at a time,
// in order, applying control records between updates). Whole warp 0; true when it took them.
#define RING_WIDE 4
__device__ __noinline__ bool read_wide(const Ctx& C, Batch& B, u64& head, u64 tail, int& nb, u64 tau0,
                                      int lane) {
    constexpr int N = 32 * RING_WIDE;
    if (tail - head < (u64)N || nb + N > BATCH_CAP) return false;
    const u64 last = tau0 + nb + N - 1;  // an update slot is reused once the host read it
    if (last > MAXU && vload(&C.st->done_consumed) < last - MAXU) return false;
    // Every address first, then every load: a load of C between two host reads (which the
    // "memory" clobber of __ldcv would force) waits behind the first host read, and the
    // round trips then run one after another (13 us for 128 records instead of ~2).
    const InRec* ring = C.in_ring;
    const u64 cap = C.in_cap;
    const InRec* at[RING_WIDE];
#pragma unroll
    for (int j = 0; j < RING_WIDE; ++j) at[j] = ring + (head + 32 * j + lane) % cap;
    InRec r[RING_WIDE];
#pragma unroll
    for (int j = 0; j < RING_WIDE; ++j) r[j] = load_rec(at[j], true);
    bool updates = true;
#pragma unroll
    for (int j = 0; j < RING_WIDE; ++j)
        updates = updates && (r[j].kind == REC_INSERT || r[j].kind == REC_DELETE);
    if (!__all_sync(0xffffffffu, updates)) return false;
    const u64 now = gtime();
#pragma unroll
    for (int j = 0; j < RING_WIDE; ++j) {
        B.rec[nb + 32 * j + lane] = r[j];
        B.taken[nb + 32 * j + lane] = now;
    }
    warp_join();
    nb += N;
    head += N;
    if (lane == 0) { C.st->in_head = head; C.dstat->in_consumed = head; }
    return true;
}

// Form the next batch (warp 0): at least BATCH_B updates or what arrived within
// BATCH_TIMEOUT_NS of the first one, plus whatever else is already waiting, at most
// BATCH_CAP; in hold mode (fixed-batch baseline) everything up to STOP. Control records
// are applied in stream order.
__device__ void form_batch(const Ctx& C, UpdShared& S, int lane) {
    Batch& B = *C.batch;
    int nb = 0, stop = 0;
    u64 first_seen = 0;
    const u64 tau0 = C.st->next_tau;
    u64 head = C.st->in_head;
    const bool hold = vload(&C.st->hold) != 0;
    while (true) {
        relay(C);
        u64 tail = 0;
        if (lane == 0) tail = vload(&C.hctl->in_tail);
        tail = __shfl_sync(0xffffffffu, tail, 0);
        __threadfence_system();  // every lane reads the records behind the tail
        bool blocked = false;  // an update slot is not free yet
        // Read up to 32 records at once, one per lane (host reads are ~1 us each); RING_WIDE
        // a lane when a long run waits.
        while (head < tail && nb < BATCH_CAP && !stop && !blocked) {
            if (read_wide(C, B, head, tail, nb, tau0, lane)) continue;
            int avail = (int)min((u64)32, tail - head);
            InRec r;
            if (lane < avail) r = load_rec(C.in_ring + (head + lane) % C.in_cap, true);
            u64 now = gtime();
            bool upd = lane >= avail || r.kind == REC_INSERT || r.kind == REC_DELETE;
            u64 last_tau = tau0 + nb + avail - 1;
            bool slots_free = last_tau <= MAXU || vload(&C.st->done_consumed) >= last_tau - MAXU;
            int took = 0;
            if (__all_sync(0xffffffffu, upd) && nb + avail <= BATCH_CAP && slots_free) {
                // Only updates, and room for all of them.
                if (lane < avail) { B.rec[nb + lane] = r; B.taken[nb + lane] = now; }
                nb += avail;
                took = avail;
            } else {
                // Accept records in order (control records change state between updates).
                for (int k = 0; k < avail && nb < BATCH_CAP && !stop; ++k) {
                    int kind = __shfl_sync(0xffffffffu, r.kind, k);
                    int ra = __shfl_sync(0xffffffffu, r.a, k);
                    int rb = __shfl_sync(0xffffffffu, r.b, k);
                    int rl = __shfl_sync(0xffffffffu, r.label, k);
                    u64 tau = tau0 + nb;
                    if (kind == REC_INSERT || kind == REC_DELETE) {
                        // An update slot is reused only once the host has read its previous
                        // occupant's completion record.
                        if (tau > MAXU && vload(&C.st->done_consumed) < tau - MAXU) { blocked = true; break; }
                        if (lane == k) { B.rec[nb] = r; B.taken[nb] = now; }
                        ++nb;
                    } else if (kind == REC_REGISTER) {
                        if (lane == 0) {
                            C.st->q_count[ra] = rb; C.st->q_nplans[ra] = rl;
                            C.st->q_until[ra] = 0x7fffffffffffffffLL; vstore(&C.st->q_from[ra], (i64)tau);
                        }
                    } else if (kind == REC_UNREGISTER) {
                        if (lane == 0) vstore(&C.st->q_until[ra], (i64)tau);
                    } else if (kind == REC_STOP) {
                        stop = 1;
                    }
                    ++took;
                }
            }
            warp_join();
            head += took;
            if (lane == 0) { C.st->in_head = head; C.dstat->in_consumed = head; }
            if (took < avail) break;  // waiting for a slot, or batch full, or stop
        }
        if (nb > 0 && first_seen == 0) first_seen = gtime();
        if (stop || nb == BATCH_CAP) break;
        bool due = nb >= BATCH_B || (nb > 0 && gtime() - first_seen >= BATCH_TIMEOUT_NS);
        if (!hold && due && (head == tail || blocked)) {
            // Nothing more waiting (or nothing more admissible): close, unless records
            // arrived meanwhile.
            u64 t2 = 0;
            if (lane == 0) t2 = vload(&C.hctl->in_tail);
            t2 = __shfl_sync(0xffffffffu, t2, 0);
            if (t2 == head || blocked) break;
            continue;
        }
        if (head == tail || blocked) __nanosleep(nb ? 500 : 2000);
    }
    if (lane == 0) {
        S.nb = nb; S.stop = stop; S.tau0 = (int)tau0; S.first_seen = first_seen;
        B.ctl.nb = nb; B.ctl.tau0 = (int)tau0;
    }
    warp_join();
}
