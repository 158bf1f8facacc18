// updater_batch.cuh -- graph-updater warp 0: relaying host counters, forming batches from
// the input ring, applying control records; a long run of records read into the batch by
// every updater warp (read_run). Buffers: in_ring/in_mirror and hctl (reads), batch control
// fields, records and their times (writes), st counters, UpdShared (block 0's shared).

// ---------------------------------------------------------------------------------------
// Graph updater (section 5): batch forming and allocation on warp 0, everything else as
// jobs over all warps that are free.

// Copy the host's consumption counters into device memory, answer a new clock ping (the
// device's clock, then the ping, into DevStatus: the host maps device times to its own
// clock by them, gpu/device_clock.py), and return the host's input tail word
// (HostCtl.in_tail; only warp 0, lane 0 reads host memory; other lanes get 0). The four
// host reads are issued together, before any store: a reload of C after a store would wait
// behind a host read and make the round trips consecutive.
__device__ __forceinline__ u64 relay(const Ctx& C) {
    if ((threadIdx.x & 31) != 0) return 0;
    const HostCtl* h = C.hctl;
    State* st = C.st;
    const u64 out = vload(&h->out_consumed), done = vload(&h->done_consumed), tail = vload(&h->in_tail);
    const u64 ping = vload(&h->clock_ping);
    vstore(&st->out_consumed, out);
    vstore(&st->done_consumed, done);
    if (ping != st->clock_ping) {
        st->clock_ping = ping;
        vstore(&C.dstat->clock_pong_ns, gtime());
        __threadfence_system();  // the time before the ping it answers
        vstore(&C.dstat->clock_pong, ping);
    }
    return tail;
}

// Whether update slot tau % MAXU may take tau: its previous occupant, tau - MAXU, must be
// read by the host (its completion record) and passed by the collector, which advances the
// GC pointer by reading each slot's done field; a slot taken before the collector passed
// it would hold the GC pointer back for good, and with it every free run.
__device__ __forceinline__ bool slot_free(const Ctx& C, u64 tau) {
    return tau <= MAXU ||
           (vload(&C.st->done_consumed) >= tau - MAXU && vload(&C.st->gc_ptr) > tau - MAXU);
}

// What updater warp 0 knows of the update slots while it forms a batch (slot_free_upto).
struct SlotsKnown {
    u64 free_to = 0;    // the slots of taus below it are free
    u64 far_tried = 0;  // the far tau last checked
};

// slot_free(tau), by one check for as far as the caller may go: slot_free is monotone in tau
// (a later slot is free only once every earlier one is) and stays true, so a free slot at
// `far` (the last tau the records waiting could take) answers every tau up to it, and the
// caller's next rounds skip their checks (two loads a round, ~1 us). A far tau found not
// free is not tried again for the same far (while running matches hold the slots, each
// round would check twice).
// Lane 0's answers are every lane's, so that `k` stays the same on all of them.
__device__ __forceinline__ bool slot_free_upto(const Ctx& C, u64 tau, u64 far, SlotsKnown& k) {
    if (tau < k.free_to) return true;
    if (far > tau && far != k.far_tried) {
        k.far_tried = far;
        if (__shfl_sync(0xffffffffu, (int)slot_free(C, far), 0)) { k.free_to = far + 1; return true; }
    }
    if (!__shfl_sync(0xffffffffu, (int)slot_free(C, tau), 0)) return false;
    k.free_to = tau + 1;
    return true;
}

// Why update slot tau % MAXU is not free yet (slot_free false), for the step timers: 1 the
// update at the GC pointer is still running, 2 it is done and the collector has not passed
// it, 0 the collector has passed the slot and the host has not read its completion record.
__device__ int slot_wait_cause(const Ctx& C, u64 tau) {
    const u64 g = vload(&C.st->gc_ptr);
    if (g > tau - MAXU) return 0;
    return vload(&C.upd[g % MAXU].done) == (i64)g ? 2 : 1;
}

// True when nothing can ever be freed again: no retired version waits for the collector and
// no update is still running. A pool that is empty then stays empty: fatal, not a hang.
__device__ bool pool_stuck(const Ctx& C) {
    u64 pending_gc = vload(&C.st->gcq_tail) - vload(&C.st->gcq_head);
    u64 running = vload(&C.st->next_tau) - 1 - vload(&C.st->completed);
    return pending_gc == 0 && running == 0;
}

// The input ring's tail and the first record of it also in in_mirror, from the tail word
// (which holds the tail's low 40 bits: the tail is less than in_cap ahead of head).
struct Tail { u64 tail, mirror_from; };
__device__ __forceinline__ Tail decode_tail(u64 word, u64 head) {
    const u64 tail = head + (((word >> MIRROR_BITS) - head) & MASK40);
    return {tail, tail - (word & ((1ULL << MIRROR_BITS) - 1))};
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

// DELETE_PATH: whether the batch's records include an insertion (BatchCtl.has_ins): any lane
// of the warp saw one among those it took (whole warp).
__device__ __forceinline__ void note_insertions(Batch& B, bool ins, int lane) {
    if (DELETE_PATH && __any_sync(0xffffffffu, ins) && lane == 0) B.ctl.has_ins = 1;
}

// DELETE_PATH: the batch holds deletions alone, so it takes apply_deletions (updater.cuh)
// and its J_CLASSIFY and J_COUNT tasks are the deletion path's.
__device__ __forceinline__ bool deletions_only(const Batch& B) {
    return DELETE_PATH && !ld(B.ctl.has_ins);
}

// What every path writes of update record r (update e of the batch) before its jobs read
// it: the vertices' first-seen labels, fixed by the host (-1: a vertex the device has
// already), their external ids, and no work items yet (J_HALVES, the short path's classify,
// the deletion path).
__device__ __forceinline__ void take_record(const Ctx& C, Batch& B, const InRec& r, int e) {
    if (r.a_label >= 0) C.vlab[r.a] = r.a_label;
    if (r.b_label >= 0) C.vlab[r.b] = r.b_label;
    C.ext[r.a] = r.ext_a;
    C.ext[r.b] = r.ext_b;
    B.nitems[e] = 0;
}

// Zero update tau's match counts of query slots q0, q0 + step, ... (upd_count).
__device__ __forceinline__ void zero_counts(const Ctx& C, int tau, int q0 = 0, int step = 1) {
    const size_t slot = (size_t)(tau % MAXU) * QMAX;
    for (int q = q0; q < QMAX; q += step) C.upd_count[slot + q] = 0;
}

// Update i's outcome and edge label; with CHECK=1 the outcome's shadow too, stamped with the
// batch (applied() checks it).
__device__ __forceinline__ void set_outcome(const Ctx& C, Batch& B, int i, bool applied_, int lab) {
    const int outcome = applied_ ? OUT_APPLIED : OUT_NOOP;
    B.outcome[i] = outcome;
    B.elab[i] = lab;
    if (CHECK) B.outcome_shadow[i] = ((int)vload(&C.st->batch_no) << 4) | outcome;
}

// Small state of the updater warps (shared memory of block 0; warp 0 writes).
struct UpdShared {
    int nb, stop, fatal;
    int tau0;
    u64 first_seen;              // %globaltimer when the batch's first record was read
    u64 read_from;               // %globaltimer at the start of the pass that read it
    u64 wait_slots;              // ns before that pass spent waiting for update slots
    u64 wait_running, wait_gc;   // its parts by slot_wait_cause 1 and 2 (lane 0 adds them)
    int small;                   // 1: this batch takes the short path (updater_small.cuh)
    int chunks;                  // its old chunks, as choose_small estimated them
    u64 t_in, closed;            // %globaltimer when form_batch began, and closed the batch
    // A long run of records form_batch left to read_run: run_n records from ring slot
    // run_pos (of in_mirror when run_mirror) go to rec[nb...] (0: none); run_stop, the
    // first of them that is not an update (run_n when none; atomicMin). No run is left at
    // no_run_at, where the last one ended before a control record: that record is read
    // alone, and a run may begin again behind it.
    int run_n, run_stop, run_mirror;
    u64 run_head, run_pos, no_run_at;
};

// The most records the batch being formed may hold, with nb taken and `waiting` more in the
// ring (BATCH_SOFT, layout.cuh). nb + waiting stays the same through a pass over one tail
// (control records aside: they leave the ring without joining the batch).
__device__ __forceinline__ int batch_limit(int nb, u64 waiting) {
    if (!BATCH_SOFT) return BATCH_CAP;
    return (u64)nb + waiting <= (u64)BATCH_SOFT_ALL ? BATCH_CAP : BATCH_SOFT;
}

// A long run of records waiting (a backlog, or a whole apply call's updates): RING_WIDE
// records a lane in one round trip to host memory, taken when they are all updates and the
// batch and the update slots have room for all of them (else the caller reads 32 at a time,
// in order, applying control records between updates). Whole warp 0; true when it took them.
//
// The N records are read as 3N consecutive 16-byte words, word q by lane q % 32, so one
// load instruction of the warp covers 512 contiguous bytes (4 PCIe lines, not 12). The
// ring's address and size are read into registers first: a load of C between two host
// reads (which the "memory" clobber of __ldcv would force) waits behind the first, and the
// round trips then run one after another (13 us for 128 records instead of ~6).
// A run the host also copied into in_mirror is read from there (device memory, L2).
__device__ __noinline__ bool read_wide(const Ctx& C, Batch& B, u64& head, Tail t, int& nb, u64 tau0,
                                      int lane, SlotsKnown& known) {
    const u64 tail = t.tail;
    constexpr int N = 32 * RING_WIDE, W = 3 * RING_WIDE;  // records; 16-byte words a lane
    static_assert(sizeof(InRec) == 48, "an input record is three 16-byte words");
    const int lim = batch_limit(nb, tail - head);
    if (tail - head < (u64)N || nb + N > lim) return false;
    const u64 far = tau0 + min((u64)lim, nb + (tail - head)) - 1;
    if (!slot_free_upto(C, tau0 + nb + N - 1, far, known)) return false;
    const bool mirrored = head >= t.mirror_from;
    const int4* ring = reinterpret_cast<const int4*>(mirrored ? C.in_mirror : C.in_ring);
    const u64 cap = C.in_cap, p0 = head % cap;
    int4 v[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {
        const int q = 32 * k + lane, rec = q / 3;
        const u64 p = p0 + rec < cap ? p0 + rec : p0 + rec - cap;  // the ring wraps
        const int4* at = ring + 3 * p + (q - 3 * rec);
        v[k] = mirrored ? __ldcg(at) : __ldcv(at);
    }
    bool updates = true;  // the first word of a record opens with its kind
#pragma unroll
    for (int k = 0; k < W; ++k)
        if ((32 * k + lane) % 3 == 0) updates = updates && (v[k].x == REC_INSERT || v[k].x == REC_DELETE);
    if (!__all_sync(0xffffffffu, updates)) return false;
    bool ins = false;
#pragma unroll
    for (int k = 0; k < W; ++k) ins = ins || ((32 * k + lane) % 3 == 0 && v[k].x == REC_INSERT);
    note_insertions(B, ins, lane);
    const u64 now = gtime();
    int4* dst = reinterpret_cast<int4*>(B.rec + nb);
#pragma unroll
    for (int k = 0; k < W; ++k) dst[32 * k + lane] = v[k];
#pragma unroll
    for (int j = 0; j < RING_WIDE; ++j) B.taken[nb + 32 * j + lane] = now;
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
    u64 t_read = 0;  // the start of the pass that read the first record
    u64 wait_slots = 0;  // time in passes before it that found no update slot free
    if (lane == 0) S.wait_running = S.wait_gc = 0;
    SlotsKnown known;
    int run = 0;  // records left to read_run
    const bool no_runs = !BULK_MIN || hold;  // runs are never left to read_run
    bool run_tried = no_runs || head == S.no_run_at;
    bool run_mirror = false;
    while (true) {
        if (nb == 0) t_read = gtime();
        const Tail t = decode_tail(__shfl_sync(0xffffffffu, relay(C), 0), head);
        const u64 tail = t.tail;
        const int lim = batch_limit(nb, tail - head);  // this pass's room (BATCH_SOFT)
        __threadfence_system();  // every lane reads the records behind the tail
        bool blocked = false;  // an update slot is not free yet
        // Read up to 32 records at once, one per lane (host reads are ~1 us each); RING_WIDE
        // a lane when a long run waits.
        while (head < tail && nb < lim && !stop && !blocked) {
            if (!run_tried && tail - head >= (u64)BULK_MIN) {
                // A long run waits: leave it to read_run, as much of it as the batch and
                // the update slots have room for (slot_free is monotone in tau: halve
                // until free).
                run_tried = true;
                int k = (int)min((u64)(lim - nb), tail - head);
                while (k >= BULK_MIN && !slot_free_upto(C, tau0 + nb + k - 1, tau0 + nb + k - 1, known)) k >>= 1;
                if (k >= BULK_MIN) { run = k; run_mirror = head >= t.mirror_from; break; }
            }
            if (read_wide(C, B, head, t, nb, tau0, lane, known)) continue;
            int avail = (int)min((u64)32, tail - head);
            InRec r;
            if (lane < avail) r = load_rec(C.in_ring + (head + lane) % C.in_cap, true);
            u64 now = gtime();
            bool upd = lane >= avail || r.kind == REC_INSERT || r.kind == REC_DELETE;
            const u64 last_tau = tau0 + nb + avail - 1;
            const u64 far = tau0 + min((u64)lim, nb + (tail - head)) - 1;
            bool slots_free = slot_free_upto(C, last_tau, far, known);
            int took = 0;
            if (__all_sync(0xffffffffu, upd) && nb + avail <= lim && slots_free) {
                // Only updates, and room for all of them.
                if (lane < avail) { B.rec[nb + lane] = r; B.taken[nb + lane] = now; }
                note_insertions(B, lane < avail && r.kind == REC_INSERT, lane);
                nb += avail;
                took = avail;
            } else {
                // Accept records in order (control records change state between updates).
                bool control = false;
                for (int k = 0; k < avail && nb < lim && !stop; ++k) {
                    int kind = __shfl_sync(0xffffffffu, r.kind, k);
                    int ra = __shfl_sync(0xffffffffu, r.a, k);
                    int rb = __shfl_sync(0xffffffffu, r.b, k);
                    int rl = __shfl_sync(0xffffffffu, r.label, k);
                    u64 tau = tau0 + nb;
                    if (kind == REC_INSERT || kind == REC_DELETE) {
                        if (!slot_free_upto(C, tau, tau, known)) { blocked = true; break; }
                        if (lane == k) { B.rec[nb] = r; B.taken[nb] = now; }
                        note_insertions(B, kind == REC_INSERT, lane);
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
                    control = control || kind == REC_REGISTER || kind == REC_UNREGISTER;
                    ++took;
                }
                // A control record read here (it ended a run, or began one, as a query's
                // registration begins an apply): a long run behind it is read by every
                // updater warp again.
                if (control) run_tried = no_runs;
            }
            warp_join();
            head += took;
            if (lane == 0) { C.st->in_head = head; C.dstat->in_consumed = head; }
            if (took < avail) break;  // waiting for a slot, or batch full, or stop
        }
        if ((nb > 0 || run) && first_seen == 0) first_seen = gtime();
        // (BATCH_SOFT: a batch past BATCH_SOFT, taken whole, may meet more records here.)
        if (stop || (BATCH_SOFT ? nb >= lim : nb == BATCH_CAP) || run) break;
        bool due = nb >= BATCH_B || (nb > 0 && gtime() - first_seen >= BATCH_TIMEOUT_NS);
        if (!hold && due && (head == tail || blocked)) {
            // Nothing more waiting (or nothing more admissible): close. CLOSE_RECHECK 1
            // first reads the host's tail once more and takes what arrived meanwhile.
            if (!CLOSE_RECHECK || blocked) break;
            u64 t2 = 0;
            if (lane == 0) t2 = vload(&C.hctl->in_tail);
            t2 = __shfl_sync(0xffffffffu, t2, 0);
            if (decode_tail(t2, head).tail == head) break;
            continue;
        }
        if (head == tail || blocked) __nanosleep(nb ? 500 : IDLE_POLL_NS);
        if (nb == 0 && blocked) {  // no update slot free yet
            const u64 dt = gtime() - t_read;
            wait_slots += dt;
            const int cause = lane == 0 ? slot_wait_cause(C, tau0) : 0;
            if (cause) *(cause == 1 ? &S.wait_running : &S.wait_gc) += dt;
        }
    }
    if (lane == 0) {
        S.nb = nb; S.stop = stop; S.tau0 = (int)tau0; S.first_seen = first_seen; S.read_from = t_read;
        S.wait_slots = wait_slots;
        S.closed = gtime();
        S.run_n = S.run_stop = run; S.run_mirror = run_mirror;
        S.run_head = head; S.run_pos = head % C.in_cap;
        B.ctl.nb = nb; B.ctl.tau0 = (int)tau0;
#if READ_JOB
        B.run_n = B.run_stop = run; B.run_at = nb; B.run_mirror = run_mirror; B.run_pos = head % C.in_cap;
#endif
    }
    warp_join();
}

// Part t of the run form_batch left (every updater warp, parts t = w, w + N_UPDATERS, ...;
// with READ_JOB, J_READ's task t on any warp): its 64 records, word q of them by lane q % 32
// (one 512-byte line a load, a lane's six loads in flight together; with twelve, as
// read_wide takes, the function spilled them and seven warps read no faster than
// read_wide's one), into the batch from rec[at0] on, with the time they were taken. The
// run: n records from ring slot pos (of in_mirror when mirrored). The first record that is
// not an update lowers *run_stop: the batch ends before it (what was copied past it is
// never read).
#define RUN_PART 64
__device__ __noinline__ void read_run(const Ctx& C, int n, int at0, u64 pos, bool mirrored, int* run_stop, int t,
                                      int lane) {
    constexpr int W = 3 * RUN_PART / 32;
    Batch& B = *C.batch;
    const int r0 = t * RUN_PART, recs = min(RUN_PART, n - r0), at = at0 + r0;
    const u64 cap = C.in_cap, p0 = pos + r0;  // may pass the ring's end
    const int4* ring = reinterpret_cast<const int4*>(mirrored ? C.in_mirror : C.in_ring);
    int4 v[W];
#pragma unroll
    for (int k = 0; k < W; ++k) {  // a short last part loads its last record again
        const int q = 32 * k + lane, rec = min(q / 3, recs - 1);
        const u64 p = p0 + rec < cap ? p0 + rec : p0 + rec - cap;  // the ring wraps
        const int4* src = ring + 3 * p + (q - 3 * (q / 3));
        v[k] = mirrored ? __ldcg(src) : __ldcv(src);
    }
    const u64 now = gtime();
    int4* dst = reinterpret_cast<int4*>(B.rec + at);
    int stop = n;
#pragma unroll
    for (int k = 0; k < W; ++k) {
        const int q = 32 * k + lane, rec = q / 3;
        if (rec >= recs) continue;
        dst[q] = v[k];
        if (q % 3 == 0 && v[k].x != REC_INSERT && v[k].x != REC_DELETE) stop = min(stop, r0 + rec);
    }
    // An insertion in the part (past run_stop too: the batch then takes the pipeline, as
    // any batch may).
    bool ins = false;
#pragma unroll
    for (int k = 0; k < W; ++k) {
        const int q = 32 * k + lane;
        ins = ins || (q / 3 < recs && q % 3 == 0 && v[k].x == REC_INSERT);
    }
    note_insertions(B, ins, lane);
#pragma unroll
    for (int j = 0; j < RUN_PART / 32; ++j)
        if (32 * j + lane < recs) B.taken[at + 32 * j + lane] = now;
    if (stop < n) atomicMin(run_stop, stop);
}

// After read_run (updater w0): the batch takes the run's records up to the first that is
// not an update, and the ring's head moves past them.
__device__ void take_run(const Ctx& C, UpdShared& S, int lane) {
    const u64 head = S.run_head + S.run_stop;
    if (lane == 0) {
        S.nb += S.run_stop;
        C.batch->ctl.nb = S.nb;
        C.st->in_head = head;
        C.dstat->in_consumed = head;
        if (S.run_stop < S.run_n) S.no_run_at = head;
    }
    warp_join();
}
