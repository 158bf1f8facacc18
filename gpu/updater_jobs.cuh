// updater_jobs.cuh -- the graph updater's data-parallel jobs (section 5), one task
// function per job kind, and the job protocol that hands their tasks to any warp.
//
// Jobs. The updater posts one job at a time in st.job_word = (seq << 40 | kind << 32 | n
// tasks) and st.job_cursor = (seq << 40 | next task); any warp claims a task with one
// atomicAdd on the cursor (the seq in the value it gets back names the job the task belongs
// to), runs it, and adds to st.job_done; the updater waits for job_done == n before the next
// job. Element jobs give a task 32 consecutive elements, one per lane. A task writes only
// elements it owns (its own records, half edges, segments, chunks, or slots it claimed with
// an atomic): tasks of one job never write each other's data. A job of at most N_UPDATERS
// tasks runs on the updater warps directly.
//
// Buffers: batch (half edges, segments, chunks: each task writes only elements it owns),
// vlab/ext/vmark/vseg, entries and vers (new runs, dt edits), chunkmask/chunkoff/
// chunkseg, gcq (appends), upd/upd_count (J_HALVES, J_ITEMS), items (J_ITEMS).

// Job kinds, in the order the updater runs them for a batch.
enum JobKind {
    J_READ = 0,     // READ_JOB, per RUN_PART records of a long run: into the batch (timed as
                    //   the input_run step)
    J_HALVES = 1,   // per record: labels, half edges, segments (vertex claims)
    J_SEGCOUNT,     // per half edge: its segment, arrival rank in it
    J_SEGSTART,     // per segment: where its half edges go
    J_PLACE,        // per half edge: into its segment
    J_ORDER,        // per position in the segments: update order within its segment
    J_CLASSIFY,     // per record (PRE_ENT: per half edge): outcome (per endpoint pair, in
                    //   order, from the graph)
    J_SEGINFO,      // per segment: current version, first insertion, sizes, ranks
    J_SEGEDIT,      // per half edge: in-place deletions; insertions sorted per segment
    J_ALLOC,        // per segment: new version, slab run, chunk table
    J_MASK,         // per chunk: live masks of versions with dead entries
    J_SCAN,         // per segment: live counts per chunk; new version length
    J_COPY,         // per chunk of old entries, then per inserted entry: the merge
    J_PUBLISH,      // per half edge: deletions after the first insertion; per segment: head,
                    //   retire the old version to the GC queue
    J_COUNT,        // per record: version lengths, work items per (slot, plan)
    J_ITEMS,        // per record: update record, then its items
    J_VERIFY,       // CHECK=1 only, after J_PUBLISH: per segment, the new version is whole
};
// Steps between jobs, timed beside them in st.step_ns (NSTEP slots in all).
enum StepKind {
    STEP_ALLOCATE = J_VERIFY + 1, STEP_GCQ_WAIT, STEP_LIVE_PLANS, STEP_ITEM_ROOM,
    STEP_FENCE,  // the fence that opens every job (updater w0, lane 0): what one fence costs
    STEP_SMALL,  // a batch on the short path (updater_small.cuh), from decision to items
    STEP_INPUT_WAIT,  // form_batch: from its start to the pass that reads the first record,
                      //   less STEP_INPUT_SLOTS
    STEP_INPUT_SLOTS,  // form_batch: passes before that one that found no update slot free
    STEP_INPUT_READ,  // form_batch: from that pass to the batch's close (reading records)
    STEP_SLOTS_RUNNING,  // part of STEP_INPUT_SLOTS: the update at the GC pointer was still running
    STEP_SLOTS_GC,  // part of STEP_INPUT_SLOTS: it was done, the collector had not passed it
                    //   (the rest: the host had not read the slot's completion record)
    STEP_INPUT_RUN,  // a long run of records read by the updater warps together (read_run;
                     //   READ_JOB: as job J_READ)
};

// Add the time since t0 to step k's total (updater w0, lane 0).
__device__ __forceinline__ void time_step(const Ctx& C, int k, u64 t0) {
    C.st->step_ns[k] += gtime() - t0;
}

// JOB_TRACE >= 2: a task of `kind` took dt ns (State.task_hist, by runner and bucket).
__device__ __forceinline__ void count_task(const Ctx& C, bool updater, int kind, u64 dt) {
    const u64 units = dt >> 8;
    const int b = units < 2 ? 0 : min(TASK_HIST - 1, 63 - __clzll(units));
    atomicAdd(&C.st->task_hist[updater ? 1 : 0][kind][b], 1ULL);
}

// JOB_TRACE=9: the parts of a J_ITEMS task, each from the warp's meeting (lanes `m`) at its
// end, in the histograms of jobs this build never runs: the update records, with the
// completions of updates without items (J_SEGSTART's row); a task without items, its
// completions as lines (J_VERIFY's); the claim of the item slots (J_COUNT's); the items'
// plans, slots and bodies (J_ALLOC's); the fence and the stamps (J_PUBLISH's). The clock
// after the meeting is ordered after every access before it (gtime_ordered).
#define ITEMS_PART(m, kind, t0)                                                    \
    do {                                                                          \
        if (JOB_TRACE == 9) {                                                     \
            const unsigned m_ = (m);                                              \
            __syncwarp(m_);                                                       \
            const u64 t_ = gtime_ordered();                                       \
            if (lane == __ffs(m_) - 1) count_task(C, false, (kind), t_ - (t0));   \
            (t0) = t_;                                                            \
        }                                                                         \
    } while (0)

// JOB_TRACE=7: what a dependent load and a fence cost inside the running kernel (bench/
// debug/load_latency.py measures a load alone), before every J_CLASSIFY task, in the
// histograms of jobs this build never runs: lane 0 chases PROBE_LOADS random words of head
// (J_SEGSTART's row), then of the whole entries pool (J_COUNT's); then the warp times a
// fence (__threadfence, J_VERIFY's). help() then splits the task: its body (J_PUBLISH's)
// and its whole time with the fence (J_CLASSIFY's). Each clock read after a chase is
// predicated on the chase's last word (gtime_after), so it cannot issue before that load
// lands. (Session 36's call 2 also timed a fence.acq_rel.gpu, and ran the updater with
// every fence one: both fences took < 0.5 us, and the rows were no faster.)
#define PROBE_LOADS 32
// The largest power of two at most n (and 2^31), less one: a chase's index mask.
__device__ __forceinline__ unsigned probe_mask(u64 n) {
    return (unsigned)((1ULL << min(31, 63 - __clzll(n))) - 1);
}
// One step of a chase: the next index from the word just loaded (so each load waits for the
// one before it).
__device__ __forceinline__ unsigned probe_next(unsigned x, int word, int i) {
    return x * 2654435761u + (unsigned)word + i;
}
__device__ void probe_costs(const Ctx& C, int lane) {
    if (lane == 0) {
        const unsigned hm = probe_mask(C.maxv), em = probe_mask(C.nslabs * 32);
        unsigned x = (unsigned)gtime() * 2654435761u;
        const u64 t0 = gtime_after(x);
        for (int i = 0; i < PROBE_LOADS; ++i) x = probe_next(x, __ldcg(C.head + (x & hm)), i);
        const u64 t1 = gtime_after(x);
        for (int i = 0; i < PROBE_LOADS; ++i) x = probe_next(x, __ldcg(&C.entries[x & em].nbr), i);
        const u64 t2 = gtime_after(x);
        count_task(C, false, J_SEGSTART, t1 - t0);
        count_task(C, false, J_COUNT, t2 - t1);
        if (x == 0x5eedu) C.st->trace_slowest = x;  // the chases' loads stay
    }
    __syncwarp();
    u64 t = gtime();
    __threadfence();
    if (lane == 0) count_task(C, false, J_VERIFY, gtime() - t);
    __syncwarp();
}

// JOB_TRACE=8: whether a J_CLASSIFY task's lanes search one after another. Each active
// lane's pair (lo, hi) is searched (find_live) three ways, in the histograms of jobs this
// build never runs: by the first active lane alone, the others waiting (J_SEGSTART's row);
// by every lane its own at once (J_COUNT's); by every lane the first lane's, one list
// (J_ALLOC's). Each clock read waits for the search's result (gtime_after).
__device__ void probe_searches(const Ctx& C, int lo, int hi, int lane) {
    const unsigned m = __activemask();
    const int src = __ffs(m) - 1;
    i64 sink = 0;
    __syncwarp(m);
    if (lane == src) {
        const u64 t0 = gtime();
        const i64 r = find_live(C, __ldcg(C.head + lo), hi);
        count_task(C, false, J_SEGSTART, gtime_after((unsigned)r) - t0);
        sink += r;
    }
    // The warp's time: from a common start to its last lane's result.
    __syncwarp(m);
    u64 t0 = gtime();
    i64 r = find_live(C, __ldcg(C.head + lo), hi);
    unsigned dt = __reduce_max_sync(m, (unsigned)(gtime_after((unsigned)r) - t0));
    if (lane == src) count_task(C, false, J_COUNT, dt);
    sink += r;
    const int lo0 = __shfl_sync(m, lo, src), hi0 = __shfl_sync(m, hi, src);
    __syncwarp(m);
    t0 = gtime();
    r = find_live(C, __ldcg(C.head + lo0), hi0);
    dt = __reduce_max_sync(m, (unsigned)(gtime_after((unsigned)r) - t0));
    if (lane == src) count_task(C, false, J_ALLOC, dt);
    sink += r;
    if (sink == 0x5eed) C.st->trace_slowest = (u64)sink;  // the searches stay
}

// J_ALLOC: a lane writes the chunk table of an array of at most this many chunks alone.
#define ALLOC_OWN_CHUNKS 4
// Segments of more half edges than this (a hub's) are walked by the whole warp (J_SEGINFO)
// and place their insertions warp-wide (J_SEGEDIT).
#define SEG_COOP 32

// CHECK=1: both runs of a version's list are sorted by (neighbour, ct), with at most one live
// entry per neighbour (version v of vertex x; one lane).
__device__ void check_list_sorted(const Ctx& C, const Adj& a, int v, int x) {
    for (int k = 1; k < a.len; ++k) {
        if (k == a.blen) continue;  // the first of the tail
        Entry p = load_entry(C.entries + adj_at(a, k - 1));
        Entry q = load_entry(C.entries + adj_at(a, k));
        if (p.nbr > q.nbr || (p.nbr == q.nbr && (p.ct > q.ct || (p.dt == INF_TS && q.dt == INF_TS)))) {
            check_fail(C, CHK_UNSORTED, v, x, k);
            break;
        }
    }
}

// Live entries of segment g's current version before index j (from the chunk masks and
// offsets of J_MASK and J_SCAN; every entry is live when the version has no dead entry).
__device__ __forceinline__ int live_before(const Ctx& C, const Batch& B, int g, int j) {
    if (ld(B.seg_dead[g]) == 0) return j;
    int oldlen = ld(B.seg_oldlen[g]);
    if (j >= oldlen) return ld(B.seg_live[g]);
    int c = ld(B.seg_chunk0[g]) + j / 32;
    return ld(C.chunkoff[c]) + __popc(ld(C.chunkmask[c]) & ((1u << (j % 32)) - 1u));
}

// Number of inserted neighbours of segment g below y (its sorted insertion list).
__device__ __forceinline__ int ins_below(const Batch& B, int g, int y) {
    int lo = ld(B.seg_ins0[g]), hi = lo + ld(B.seg_nins[g]), base = lo;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (ld(B.ins_y[mid]) < y) lo = mid + 1; else hi = mid;
    }
    return lo - base;
}

// Entry index of old position j of segment g (its base run, then its tail run).
__device__ __forceinline__ i64 old_at(const Batch& B, int g, int j) {
    return ld(j < ld(B.seg_blen[g]) ? B.seg_off[g] : B.seg_off2[g]) + j;
}

// New position of segment g's live old entry at old position j with neighbour y: the live
// entries before it in its own run, the other run's that go before it, the insertions below
// it (J_COPY: base and tail are each sorted, and y's tail entries are younger than its base
// entries).
__device__ __forceinline__ int merged_pos(const Ctx& C, const Batch& B, int g, int j, int y) {
    const int bl = ld(B.seg_blen[g]);
    // Lanes of base and tail entries at one call site, so that they search together: the
    // other run's search (a base entry goes after the tail's entries below y, a tail entry
    // after the base's up to y), then the live entries before three positions.
    const bool in_base = j < bl;
    const int n = ld(B.seg_oldlen[g]);
    const i64 off = in_base ? ld(B.seg_off2[g]) + bl : ld(B.seg_off[g]);
    const int k = lower_nbr(C, off, in_base ? n - bl : bl, y, !in_base);
    const int lb = live_before(C, B, g, bl), lj = live_before(C, B, g, j);
    const int lk = live_before(C, B, g, in_base ? bl + k : k);
    return (in_base ? lj + lk - lb : lj - lb + lk) + ins_below(B, g, y);
}

// Live old entries of segment g that go before an insertion of neighbour y, the base's and
// the tail's up to y, both runs searched at once (one after the other before session 37:
// the lanes of a task then searched their runs one lane after another where their paths
// differed).
__device__ __forceinline__ int live_upto(const Ctx& C, const Batch& B, int g, int y) {
    const int bl = ld(B.seg_blen[g]), n = ld(B.seg_oldlen[g]);
    int kb, kt;
    lower_nbr_two(C, ld(B.seg_off[g]), bl, ld(B.seg_off2[g]) + bl, max(n - bl, 0), y, true, kb, kt);
    return live_before(C, B, g, kb) + live_before(C, B, g, bl + kt) - live_before(C, B, g, bl);
}

// Applied deletion `key` (of segment g, after its first insertion) ends the entry alive at
// its tau in the segment's new version v (J_PUBLISH, and publish_segment).
__device__ __forceinline__ void end_deleted(const Ctx& C, Batch& B, int tau0, int g, int v, const Version& ver,
                                            u64 key) {
    const int i = half_i(key), x = half_x(key), y = half_y(B, key);
    const i64 ent = find_at(C, adj_of(ver), y, tau0 + i);
    if (CHECK) {
        const int len = ver.len - (ld(B.seg_app[g]) ? ver.blen : 0);  // the new run's
        if (len != ld(B.seg_live[g]) + ld(B.seg_nins[g])) check_fail(C, CHK_LEN, tau0 + i, x, len);
        if (ent < 0) check_fail(C, CHK_DELETE_MISSING, tau0 + i, x, y);
        else if (ld(C.entries[ent].dt) != INF_TS)
            check_fail(C, CHK_DELETE_DEAD, tau0 + i, x, y + 1000LL * (ent - ld(B.seg_noff[g])));
    }
    if (ent >= 0) C.entries[ent].dt = tau0 + i;
    atomicAdd(&C.vers[v].ndead, 1);
}

// PUBLISH_LEAN: segment g has no applied deletion after its first insertion (J_SEGINFO).
__device__ __forceinline__ bool lean_segment(Batch& B, int g) {
#if PUBLISH_LEAN
    return ld(B.seg_lean[g]);
#else
    return false;
#endif
}

// FUSE_COPY_PUBLISH: segment g's new version, once every unit of J_COPY for g is done:
// the applied deletions after its first insertion end their entries in it, head names it,
// and its predecessor goes into the GC queue (J_PUBLISH's work for g). `step` lanes share
// the half edges from the first insertion on, this one taking every step-th from `first`
// (the whole warp: lane, 32; one lane alone: 0, 1); `leader` publishes head. PUBLISH_LEAN:
// a lean segment has no such deletion (J_SEGINFO), so there is nothing to walk (CHECK=1
// walks it still, to fail CHK_SEG_DRIFT if one is found), and the queue slot is its own.
__device__ void publish_segment(const Ctx& C, Batch& B, int tau0, int g, int first, int step, bool leader) {
    const int v = ld(B.seg_new[g]);
    const int h1 = ld(B.seg_h0[g]) + ld(B.seg_cnt[g]);
    const bool lean = lean_segment(B, g);
    if (!lean || CHECK) {
        const Version ver = load_version_list(C.vers + v);
        for (int q = ld(B.seg_first_ins[g]) + first; q < h1; q += step) {
            const u64 key = ld(B.half[q]);
            const int i = half_i(key);
            if (!applied(C, B, i, J_PUBLISH) || is_insert(B, i)) continue;
            if (lean) check_fail(C, CHK_SEG_DRIFT, tau0 + i, g, -1);
            else end_deleted(C, B, tau0, g, v, ver, key);
        }
    }
    if (leader) {
        vstore(C.head + ld(B.seg_x[g]), v);
        const int cur = ld(B.seg_cur[g]);
#if PUBLISH_LEAN
        if (cur >= 0) C.gcq[(ld(B.ctl.gcq_base) + ld(B.seg_gcq[g])) % C.gcq_cap] = cur;
#else
        if (cur >= 0) C.gcq[(ld(B.ctl.gcq_base) + atomicAdd(&B.ctl.gcpos, 1)) % C.gcq_cap] = cur;
#endif
    }
}

// FUSE_COPY_PUBLISH: one unit of J_COPY for segment g is done (its writes fenced before):
// g when it was the last (then fenced, so that its publisher reads every unit's writes),
// else -1. A segment has a unit per old chunk and per insertion.
__device__ __forceinline__ int copied_one(const Ctx& C, Batch& B, int g) {
    const int target = (ld(B.seg_oldlen[g]) + 31) / 32 + ld(B.seg_nins[g]);
    const int k = atomicAdd(&B.seg_copied[g], 1);
    if (CHECK && k >= target) check_fail(C, CHK_SEG_COUNTER, J_COPY, g, k);
    if (k != target - 1) return -1;
    __threadfence();
    return g;
}

// Publish the segments the lanes completed (-1: none). A lean segment (PUBLISH_LEAN) and,
// PUBLISH_ALONE > 0, one of at most that many half edges from its first insertion on are
// published by the lane that completed them, every such lane at once; the others by the
// whole warp, one after another. (A J_COPY task of insertions may complete a segment on
// every lane.)
__device__ __forceinline__ void publish_completed(const Ctx& C, Batch& B, int tau0, int done, int lane) {
    const bool alone = done >= 0 && (lean_segment(B, done) || (PUBLISH_ALONE > 0 &&
                       ld(B.seg_h0[done]) + ld(B.seg_cnt[done]) - ld(B.seg_first_ins[done]) <= PUBLISH_ALONE));
    if (alone) publish_segment(C, B, tau0, done, 0, 1, true);
    for (unsigned m = __ballot_sync(0xffffffffu, done >= 0 && !alone); m; m &= m - 1)
        publish_segment(C, B, tau0, __shfl_sync(0xffffffffu, done, __ffs(m) - 1), lane, 32, lane == 0);
}

__device__ void task_copy_chunks(const Ctx& C, Batch& B, int t, int lane) {
    int nchunks = ld(B.ctl.nchunks);
    Entry e[COPY_UNROLL];
    int g[COPY_UNROLL], j[COPY_UNROLL];
    bool valid[COPY_UNROLL];
#pragma unroll
    for (int u = 0; u < COPY_UNROLL; ++u) {
        int c = t * COPY_UNROLL + u;
        valid[u] = c < nchunks;
        g[u] = valid[u] ? ld(C.chunkseg[c]) : 0;
        j[u] = valid[u] ? (c - ld(B.seg_chunk0[g[u]])) * 32 + lane : 0;
        valid[u] = valid[u] && j[u] < ld(B.seg_oldlen[g[u]]);
        if (valid[u]) e[u] = load_entry(C.entries + old_at(B, g[u], j[u]));
    }
#pragma unroll
    for (int u = 0; u < COPY_UNROLL; ++u) {
        if (!valid[u] || e[u].dt != INF_TS) continue;
        int pos = merged_pos(C, B, g[u], j[u], e[u].nbr);
        *reinterpret_cast<int4*>(C.entries + ld(B.seg_noff[g[u]]) + pos) =
            make_int4(e[u].nbr, e[u].elab, e[u].ct, e[u].dt);
    }
    if (FUSE_COPY_PUBLISH) {
        // Every lane's entries of the task's chunks, then one count a chunk (lane u counts
        // chunk u), then the segments this task completed.
        warp_join();
        __threadfence();
        const int c = t * COPY_UNROLL + lane;
        const int done = lane < COPY_UNROLL && c < nchunks ? copied_one(C, B, ld(C.chunkseg[c])) : -1;
        publish_completed(C, B, ld(B.ctl.tau0), done, lane);
    }
}

// Level-2 chunks (work items) of an update (a, b, elab) at tau for one (slot, plan) pair: 0
// when the slot does not see tau or the start edge does not fit the plan (vertex and edge
// labels; symmetry breaking by external ids). mlen: the version lengths of a and b at tau. Every field is
// loaded before any is tested: one round trip to L2, not a chain of them.
__device__ int chunks_of(const Ctx& C, int qp, int tau, int a, int b, int elab, const int* mlen) {
    const int q = qp >> 16;
    const int* pl = plan_ptr(C, q, qp & 0xffff);
    const i64 from = ld(C.st->q_from[q]), until = ld(C.st->q_until[q]);
    const int n = __ldcg(pl + PL_N), le = __ldcg(pl + PL_ELAB);
    const int la = __ldcg(pl + PL_VLABEL), lb = __ldcg(pl + PL_VLABEL + 1);
    const int lt = __ldcg(pl + PL_SYMLT + 1), gt = __ldcg(pl + PL_SYMGT + 1);
    const int nbn = __ldcg(pl + PL_BNCNT + 2);  // level 2's backward neighbours: among 0, 1
    const int p0 = __ldcg(pl + PL_BNPOS + 2 * KMAX), p1 = __ldcg(pl + PL_BNPOS + 2 * KMAX + 1);
    const int va = __ldcg(C.vlab + a), vb = __ldcg(C.vlab + b);
    const i64 ea = __ldcg(C.ext + a), eb = __ldcg(C.ext + b);
    if (!(from <= tau && tau < until)) return 0;
    if ((la != ANY && va != la) || (lb != ANY && vb != lb) || (le != ANY && elab != le)) return 0;
    if (((lt & 1) && !(eb < ea)) || ((gt & 1) && !(eb > ea))) return 0;
    if (n == 2) return 1;
    // The list level 2 scans: its first shortest backward neighbour's (as pick_base), on
    // the ends as run_item takes them.
    const bool flip = flip_ends(pl, mlen[0], mlen[1]);
    const int at[2] = {mlen[flip], mlen[!flip]};
    const int len = nbn > 1 && at[p1 & 1] < at[p0 & 1] ? at[p1 & 1] : at[p0 & 1];
    return max(1, (len + CHUNK - 1) / CHUNK);
}

// The list of vertex x at tau, x in this bulk batch (segment vseg[x]; the short path sets no
// segments), from the batch's segments rather than head, which J_PUBLISH may be storing
// meanwhile (FUSE_PUBLISH_COUNT): the new
// version from its first insertion's tau on, else the version current before the batch
// (find_versions after J_PUBLISH walks from the one to the other by ct_min alike).
__device__ __forceinline__ Adj batch_list_at(const Ctx& C, const Batch& B, int x, int tau) {
    const int g = ld(C.vseg[x]);
    int v = ld(B.seg_new[g]);
    if (v < 0 || tau < ld(C.vers[v].ct_min)) v = ld(B.seg_cur[g]);
    Adj a;
    if (v >= 0) return adj_of(load_version_list(C.vers + v));
    a.off = a.off2 = 0; a.len = a.blen = 0;
    return a;
}

// Work items of applied update e (tau); records the version lengths of its endpoints, found
// from the bulk batch's segments (in J_PUBLISH's job) or from the published heads.
__device__ int count_items(const Ctx& C, Batch& B, int e, int tau, bool from_segments) {
    int a = ld(B.rec[e].a), b = ld(B.rec[e].b), elab = ld(B.elab[e]);
    Adj aa, ab;
    if (from_segments) {
        aa = batch_list_at(C, B, a, tau);
        ab = batch_list_at(C, B, b, tau);
    } else {
        find_versions(C, a, b, tau, aa, ab);
    }
    int mlen[2] = {aa.len, ab.len};
    B.len_a[e] = mlen[0];
    B.len_b[e] = mlen[1];
    int nqp = ld(B.ctl.nqp), items = 0;
    for (int k = 0; k < nqp; ++k) items += chunks_of(C, ld(B.qp[k]), tau, a, b, elab, mlen);
    B.nitems[e] = items;
    return items;
}

// J_HALVES: per record: labels, half edges, segments (vertex claims)
__device__ __forceinline__ void task_halves(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    if (e >= nb) return;
    InRec r = load_rec(B.rec + e);
    take_record(C, B, r, e);
    zero_counts(C, tau0 + e);
#if !FUSE_HALVES_COUNT
    const int bno = (int)vload(&C.st->batch_no);
#endif
    for (int side = 0; side < 2; ++side) {
        int x = side ? r.b : r.a;
        B.hkey[2 * e + side] = ((u64)x << 32) | ((u64)e << 1) | (u64)side;
#if FUSE_HALVES_COUNT
        // vmark[x]: x's half edges so far in this batch (0 between batches: J_SEGSTART
        // resets it), so the count gives the arrival rank J_SEGCOUNT would have.
        const int rank = atomicAdd(&C.vmark[x], 1);
        B.hrank[2 * e + side] = rank;
        if (rank == 0) {  // first half edge of x in this batch
            int g = atomicAdd(&B.ctl.nseg, 1);
            C.vseg[x] = g;
            B.seg_x[g] = x;
            if (FUSE_SEGSTART_PLACE) B.seg_h0[g] = -1;  // unplaced (task_place_claiming)
            if (FUSE_COPY_PUBLISH) B.seg_copied[g] = 0;
        }
#else
        if (atomicMax(&C.vmark[x], bno) < bno) {  // first half edge of x in this batch
            int g = atomicAdd(&B.ctl.nseg, 1);
            C.vseg[x] = g;
            B.seg_x[g] = x;
            B.seg_cnt[g] = 0;
        }
#endif
    }
}

// J_SEGCOUNT: per half edge: its segment, arrival rank in it
__device__ __forceinline__ void task_segcount(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    if (e >= 2 * nb) return;
    int g = ld(C.vseg[half_x(ld(B.hkey[e]))]);
    if (CHECK && (g >= ld(B.ctl.nseg) || ld(B.seg_x[g]) != half_x(ld(B.hkey[e]))))
        check_fail(C, CHK_SEGMENT, tau0 + e / 2, half_x(ld(B.hkey[e])), g);
    B.hseg[e] = g;
    B.hrank[e] = atomicAdd(&B.seg_cnt[g], 1);
}

// Segment g's count of half edges (vertex x's, FUSE_HALVES_COUNT: J_HALVES counted them in
// vmark), taken from vmark, which is reset for the next batch (J_SEGSTART, or J_PLACE's
// claimer with FUSE_SEGSTART_PLACE).
__device__ __forceinline__ int take_seg_count(const Ctx& C, Batch& B, int g, int x) {
    const int cnt = ld(C.vmark[x]);
    C.vmark[x] = 0;
    B.seg_cnt[g] = cnt;
    return cnt;
}

// J_SEGSTART: per segment: where its half edges go (with FUSE_HALVES_COUNT, also its count
// of half edges, from vmark, which it resets for the next batch)
__device__ __forceinline__ void task_segstart(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int ns = ld(B.ctl.nseg);
    int cnt = 0;
    if (e < ns && FUSE_HALVES_COUNT) {
        cnt = take_seg_count(C, B, e, ld(B.seg_x[e]));
    } else if (e < ns) {
        cnt = ld(B.seg_cnt[e]);
    }
    int base = warp_claim(&B.ctl.hcur, cnt, lane);
    if (e < ns) B.seg_h0[e] = base;
}

// J_PLACE: per half edge: into its segment (with FUSE_HALVES_COUNT, also its segment, which
// J_SEGCOUNT finds otherwise)
__device__ __forceinline__ void task_place(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    if (e >= 2 * nb) return;
    int g;
    if (FUSE_HALVES_COUNT) {
        const int x = half_x(ld(B.hkey[e]));
        g = ld(C.vseg[x]);
        if (CHECK && (g >= ld(B.ctl.nseg) || ld(B.seg_x[g]) != x)) check_fail(C, CHK_SEGMENT, tau0 + e / 2, x, g);
        B.hseg[e] = g;
    } else {
        g = ld(B.hseg[e]);
    }
    int at = ld(B.seg_h0[g]) + ld(B.hrank[e]);
    u64 key = ld(B.hkey[e]);
    B.tmp[at] = key;
    B.tmp_y[at] = half_y(B, key);
}

// J_PLACE with FUSE_SEGSTART_PLACE: per half edge: into its segment, whose place the
// segment's first lane to arrive claims (J_SEGSTART's work: the count from vmark, vmark
// reset, a base from hcur) and publishes in seg_h0 (-1 unclaimed, -2 being claimed); the
// others wait for it. A claimer waits on nothing before it publishes, and every lane
// reaches warp_claim, so no lane waits on a lane that cannot run.
__device__ __forceinline__ void task_place_claiming(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    const bool on = e < 2 * nb;
    const u64 key = on ? ld(B.hkey[e]) : 0;
    const int x = on ? half_x(key) : 0;
    const int g = on ? ld(C.vseg[x]) : 0;
    if (CHECK && on && (g >= ld(B.ctl.nseg) || ld(B.seg_x[g]) != x)) check_fail(C, CHK_SEGMENT, tau0 + e / 2, x, g);
    const bool claims = on && atomicCAS(&B.seg_h0[g], -1, -2) == -1;
    const int cnt = claims ? take_seg_count(C, B, g, x) : 0;
    const int base = warp_claim(&B.ctl.hcur, cnt, lane);
    if (claims) {
        __threadfence();  // seg_cnt before the place that publishes it
        atomicExch(&B.seg_h0[g], base);
    }
    warp_join();
    if (!on) return;
    B.hseg[e] = g;
    int h0;
    while ((h0 = vload(&B.seg_h0[g])) < 0) __nanosleep(32);
    __threadfence();  // acquire: the claimer's seg_cnt is visible after its place
    const int at = h0 + ld(B.hrank[e]);
    B.tmp[at] = key;
    B.tmp_y[at] = half_y(B, key);
}

// J_ORDER: per position of tmp[] (segments one after another): the half edge there gets its
// rank in its segment by update index (half[]) and by (other endpoint, update index)
// (hpair[]). The warp reads the stretch of tmp[] its 32 positions' segments span, ORDER_ROUND
// rounds of 32 entries loaded at once, and each lane counts the entries of its own segment
// below its half edge among them by shuffles: O(cnt) per warp for a hub's segment of cnt half
// edges, where a lane walking its whole segment alone made the job O(cnt) per lane, and the
// warps that held one of a hub's half edges each waited cnt steps of its loads (J_ORDER was
// 72 of the ~500 us of an oracle-github batch, bench/results/gpu/session14). Within a
// segment x is the same, so a half edge's low 16 bits (update index, side) order it.
#define ORDER_ROUND 4
__device__ __forceinline__ void task_order(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int p = t * 32 + lane, np = 2 * nb;
    const bool on = p < np;
    const u64 key = on ? ld(B.tmp[p]) : 0;
    const int h = (int)(key & 0xffff), y = on ? ld(B.tmp_y[p]) : 0;  // half edge index, other end
    const int g = on ? ld(B.hseg[h]) : 0;
    const int h0 = on ? ld(B.seg_h0[g]) : 0, end = on ? h0 + ld(B.seg_cnt[g]) : 0;
    // The segments of this task's positions cover [lo, hi): lane 0's starts it, the last
    // position's ends it.
    const int lo = __shfl_sync(0xffffffffu, h0, 0);
    const int hi = __shfl_sync(0xffffffffu, end, min(31, np - 1 - t * 32));
    int r = 0, rp = 0;  // ranks by update index, and by (other endpoint, update index)
    for (int base = lo; base < hi; base += 32 * ORDER_ROUND) {
        int oh[ORDER_ROUND], oy[ORDER_ROUND];
#pragma unroll
        for (int c = 0; c < ORDER_ROUND; ++c) {
            const int k = base + 32 * c + lane;
            oh[c] = k < hi ? (int)(ld(B.tmp[k]) & 0xffff) : 0;
            oy[c] = k < hi ? ld(B.tmp_y[k]) : 0;
        }
#pragma unroll
        for (int c = 0; c < ORDER_ROUND; ++c) {
            const int from = base + 32 * c, n = min(32, hi - from);  // the same in every lane
            for (int j = 0; j < n; ++j) {
                const int ph = __shfl_sync(0xffffffffu, oh[c], j), py = __shfl_sync(0xffffffffu, oy[c], j);
                const bool mine = from + j >= h0 && from + j < end;
                r += mine && ph < h;
                rp += mine && (py < y || (py == y && (ph >> 1) < (h >> 1)));
            }
        }
    }
    if (!on) return;
    B.half[h0 + r] = key;
    B.hsorted[h] = h0 + r;
    B.hpair[h0 + rp] = key;
    B.hpair_y[h0 + rp] = y;
    B.hpair_pos[h] = h0 + rp;
}

// J_CLASSIFY: per record (PRE_ENT: per half edge): outcome (per endpoint pair, in order,
// from the graph)
__device__ __forceinline__ void task_classify(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
#if PRE_ENT
    const int hh = t * 32 + lane, e = hh >> 1;  // element of an element job: a half edge
    if (hh >= 2 * nb) return;
#else
    const int e = t * 32 + lane;  // element of an element job
    if (e >= nb) return;
#endif
    // Outcome of update e: replay its endpoint pair's updates in this batch, in order,
    // from the pair's state in the graph (insert of a present edge / delete of an
    // absent one is a no-op). They sit next to each other in the (other endpoint,
    // update) order of the smaller endpoint's segment. Each lane writes its own update.
    int a = ld(B.rec[e].a), b = ld(B.rec[e].b);
    int lo = min(a, b), hi = max(a, b);
    int h = 2 * e + (a == lo ? 0 : 1);
    if (JOB_TRACE == 8) probe_searches(C, lo, hi, lane);
#if PRE_ENT
    // Both kinds of half edge search at one call site, so their lanes search together.
    const bool larger = hh != h;  // the larger endpoint's half edge: its entry, for J_SEGEDIT
    int p = 0, q = 0;
    if (!larger) {
        const int h0 = ld(B.seg_h0[ld(B.hseg[h])]);
        p = q = ld(B.hpair_pos[h]);
        while (q > h0 && ld(B.hpair_y[q - 1]) == hi) --q;
    }
    const int chain = p - q + 1;
    const int x = larger ? hi : lo, y = larger ? lo : hi;
    i64 ent = find_live(C, __ldcg(C.head + x), y);
    if (larger) {
        B.pre_ent[hh] = ent;
        return;
    }
#else
    int p = ld(B.hpair_pos[h]), q = p, h0 = ld(B.seg_h0[ld(B.hseg[h])]);
    while (q > h0 && ld(B.hpair_y[q - 1]) == hi) --q;
    const int chain = p - q + 1;
    i64 ent = find_live(C, __ldcg(C.head + lo), hi);
#endif
#if PRE_ENT
    B.pre_ent[h] = ent;
#endif
    bool exists = ent >= 0, mine = false;
    if (CHECK && (find_live(C, __ldcg(C.head + hi), lo) >= 0) != exists)
        check_fail(C, CHK_ASYMMETRIC, tau0 + e, lo, hi);
    int lab = exists ? __ldcg(&C.entries[ent].elab) : 0;
    for (; q <= p; ++q) {
        int k = half_i(ld(B.hpair[q]));
        bool ins = is_insert(B, k);
        mine = ins != exists;
        if (mine) {
            if (ins) lab = ld(B.rec[k].label);
            exists = ins;
        }
    }
    if (CHECK) {
        bool ex = ent >= 0, mine2 = false;
        int cnt = 0;
        for (int k = 0; k <= e; ++k) {
            int ka = ld(B.rec[k].a), kb = ld(B.rec[k].b);
            if (min(ka, kb) != lo || max(ka, kb) != hi) continue;
            ++cnt;
            bool ins = is_insert(B, k);
            mine2 = ins != ex;
            if (mine2) ex = ins;
        }
        if (mine2 != mine || cnt != chain)
            check_fail(C, CHK_CHAIN, tau0 + e, lo, hi + 1000LL * cnt + 1000000LL * chain);
    }
    set_outcome(C, B, e, mine, lab);
}

// Where a vertex's new version goes, from its current version ov and nins insertions: true
// to append a tail in ov's run (few insertions into a long list: the tail fits in the run
// and holds at most blen / TAIL_DIV entries), false for a new run. J_SEGINFO and the short
// path (updater_small.cuh) both decide by it.
__device__ __forceinline__ bool appends_tail(const Version& ov, int nins) {
    const int tlen = ov.len - ov.blen, hw = ov.toff + tlen;
    return TAIL_DIV > 0 && nins > 0 && tlen + nins <= (32 << ov.cls) - hw && (tlen + nins) * TAIL_DIV <= ov.blen;
}

// J_SEGINFO: per segment: current version, first insertion, sizes, ranks
__device__ __forceinline__ void task_seginfo(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int ns = ld(B.ctl.nseg);
    bool on = e < ns;
    int first_ins = -1, nins = 0, ndel = 0, nlate = 0, oldlen = 0, dead = 0, cur = -1, cls = -1;
    int blen = 0, app = 0;
    i64 off = 0, off2 = 0, noff = 0;
    const int h0 = on ? ld(B.seg_h0[e]) : 0, cnt = on ? ld(B.seg_cnt[e]) : 0;
    // The segment's applied insertions, the first of them, and the applied deletions before
    // it (ndel) and after it (nlate): a lane walks a small segment, the whole warp a large
    // one (a hub's), 32 at a time.
    const bool big = cnt > SEG_COOP;
    for (int q = h0; !big && q < h0 + cnt; ++q) {
        int i = half_i(ld(B.half[q]));
        if (!applied(C, B, i, J_SEGINFO)) continue;
        if (is_insert(B, i)) { if (first_ins < 0) first_ins = q; ++nins; }
        else if (first_ins < 0) ++ndel;
        else ++nlate;
    }
    for (unsigned bigs = __ballot_sync(0xffffffffu, big); bigs; bigs &= bigs - 1) {
        const int src = __ffs(bigs) - 1;
        const int s0 = __shfl_sync(0xffffffffu, h0, src);
        const int s1 = s0 + __shfl_sync(0xffffffffu, cnt, src);
        int f = -1, ni = 0, nd = 0, nl = 0;
        for (int base = s0; base < s1; base += 32) {
            const int q = base + lane;
            bool ap = false, ins = false;
            if (q < s1) {
                int i = half_i(ld(B.half[q]));
                ap = applied(C, B, i, J_SEGINFO);
                ins = ap && is_insert(B, i);
            }
            const unsigned mi = __ballot_sync(0xffffffffu, ins);
            const unsigned md = __ballot_sync(0xffffffffu, ap && !ins);
            if (f < 0) {
                const unsigned before = mi ? (1u << (__ffs(mi) - 1)) - 1u : 0xffffffffu;
                nd += __popc(md & before);
                nl += __popc(md & ~before);
                if (mi) f = base + __ffs(mi) - 1;
            } else {
                nl += __popc(md);
            }
            ni += __popc(mi);
        }
        if (lane == src) { first_ins = f; nins = ni; ndel = nd; nlate = nl; }
    }
    if (on) {
        int x = ld(B.seg_x[e]);
        cur = __ldcg(C.head + x);
        if (cur >= 0) {
            Version ver = load_version(C.vers + cur);
            if (CHECK && ver.x != x) check_fail(C, CHK_WRONG_VERTEX, tau0, x, cur);
            if (CHECK) check_list_sorted(C, adj_of(ver), cur, x);
            const int tlen = ver.len - ver.blen, hw = ver.toff + tlen;
            off = (i64)ver.slab * 32;
            dead = ver.ndead + ndel;
            // Dead-entry count (the in-place deletions of J_SEGEDIT count here).
            if (ndel) C.vers[cur].ndead = dead;
            // Few insertions into a long list: a new tail (the old tail's live entries and the
            // insertions) after the old one in the same run; the base stays.
            app = appends_tail(ver, nins);  // nins > 0 exactly when first_ins >= 0
            if (app) {
                oldlen = tlen; off2 = off + ver.toff; noff = off + hw; cls = ver.cls;
            } else {
                oldlen = ver.len; blen = ver.blen; off2 = off + ver.toff - ver.blen;
            }
        }
        if (!app) cls = first_ins >= 0 ? ceil_log2((unsigned)((oldlen + nins + 31) / 32)) : -1;
        B.seg_cur[e] = cur;
        B.seg_first_ins[e] = first_ins;
        B.seg_nins[e] = nins;
        B.seg_oldlen[e] = oldlen;
        B.seg_dead[e] = oldlen > 0 ? dead : 0;  // dead entries among those merged, at most
        B.seg_off[e] = off;
        B.seg_off2[e] = off2;
        B.seg_blen[e] = blen;
        B.seg_app[e] = app;
        B.seg_noff[e] = noff;
        B.seg_cls[e] = cls;
        B.seg_new[e] = -1;
    }
    bool fresh = cls >= 0, run = fresh && !app;  // a new version; a new slab run
    int vr = warp_claim(&B.ctl.nver, (int)fresh, lane);
    int ch = warp_claim(&B.ctl.nchunks, fresh ? (oldlen + 31) / 32 : 0, lane);
    int i0 = warp_claim(&B.ctl.nins, fresh ? nins : 0, lane);
    const int gq = warp_claim(&B.ctl.npush, (int)(fresh && cur >= 0), lane);
    warp_claim(&B.ctl.ncompact, (int)(fresh && oldlen > 0 && dead > 0), lane);
    if (fresh) {
#if PUBLISH_LEAN
        B.seg_gcq[e] = gq;
        B.seg_lean[e] = nlate == 0;
#else
        (void)gq; (void)nlate;
#endif
        B.seg_vrank[e] = vr;
        B.seg_chunk0[e] = ch;
        B.seg_ins0[e] = i0;
    }
    if (run) {
        // Rank among the batch's new runs of the same size class.
        unsigned peers = __match_any_sync(__activemask(), cls);
        int leader = __ffs(peers) - 1, base = 0;
        if (lane == leader) base = atomicAdd(&B.ctl.class_cnt[cls], __popc(peers));
        base = __shfl_sync(peers, base, leader);
        B.seg_crank[e] = base + __popc(peers & lanemask_lt());
    }
}

// J_SEGEDIT, one half edge e (key, segment g): an in-place deletion, or an insertion's place
// in its segment's sorted insertion list (small segments; see place_insertions).
__device__ void edit_half(const Ctx& C, Batch& B, int tau0, int e, u64 key, int g) {
    int i = half_i(key);
    if (!applied(C, B, i, J_SEGEDIT)) return;
    int first_ins = ld(B.seg_first_ins[g]);
    int y = half_y(B, key);
    if (CHECK) {
        int f = -1, n = 0;
        for (int q = ld(B.seg_h0[g]), q1 = q + ld(B.seg_cnt[g]); q < q1; ++q) {
            int iq = half_i(ld(B.half[q]));
            if (!applied(C, B, iq, J_SEGEDIT) || !is_insert(B, iq)) continue;
            if (f < 0) f = q;
            ++n;
        }
        if (f != first_ins || n != ld(B.seg_nins[g]))
            check_fail(C, CHK_SEG_DRIFT, tau0, half_x(key),
                       (f - first_ins) + 1000LL * (n - ld(B.seg_nins[g])));
    }
    if (!is_insert(B, i)) {
        if (first_ins < 0 || e < first_ins) {
            // Deleted before the batch's first insertion into this array: edit in place. Such
            // a deletion is its pair's first applied update (a second would need an applied
            // insertion between), so it ends the entry live before the batch (PRE_ENT: the
            // one J_CLASSIFY found; seg_cur is the version it searched).
#if PRE_ENT
            const i64 ent = ld(B.pre_ent[(int)(key & 0xffff)]);
            if (CHECK && ent != find_live(C, ld(B.seg_cur[g]), y))
                check_fail(C, CHK_PRE_ENT, tau0 + i, half_x(key), y);
#else
            const i64 ent = find_live(C, ld(B.seg_cur[g]), y);
#endif
            if (ent >= 0) C.entries[ent].dt = tau0 + i;
            else if (CHECK) check_fail(C, CHK_DELETE_MISSING, tau0 + i, half_x(key), y);
        }
        return;
    }
    if (ld(B.seg_cnt[g]) > SEG_COOP) return;  // placed by place_insertions
    int h1 = ld(B.seg_h0[g]) + ld(B.seg_cnt[g]), r = 0;
#pragma unroll 4
    for (int q = first_ins; q < h1; ++q) {
        u64 hq = ld(B.half[q]);
        int iq = half_i(hq);
        if (!applied(C, B, iq, J_SEGEDIT) || !is_insert(B, iq)) continue;
        int yq = half_y(B, hq);
        r += yq < y || (yq == y && q < e);
    }
    int at = ld(B.seg_ins0[g]) + r;
    B.ins_y[at] = y;
    B.ins_i[at] = i;
    B.ins_seg[at] = g;
}

// The applied insertions of a large segment g in (neighbour, update) order (whole warp):
// hpair already holds the segment's half edges in that order, so an insertion's place is
// the number of applied insertions before it there, one warp-wide count per 32.
__device__ void place_insertions(const Ctx& C, Batch& B, int g, int lane) {
    const int h0 = ld(B.seg_h0[g]), h1 = h0 + ld(B.seg_cnt[g]);
    int at = ld(B.seg_ins0[g]);
    for (int k0 = h0; k0 < h1; k0 += 32) {
        const int k = k0 + lane;
        bool ins = false;
        int i = 0;
        if (k < h1) {
            i = half_i(ld(B.hpair[k]));
            ins = applied(C, B, i, J_SEGEDIT) && is_insert(B, i);
        }
        const unsigned mi = __ballot_sync(0xffffffffu, ins);
        if (ins) {
            const int pos = at + __popc(mi & lanemask_lt());
            B.ins_y[pos] = ld(B.hpair_y[k]);
            B.ins_i[pos] = i;
            B.ins_seg[pos] = g;
        }
        at += __popc(mi);
    }
}

// J_SEGEDIT: per half edge: in-place deletions; insertions sorted per segment (a large
// segment's by the task holding its first half edge, warp-wide)
__device__ __forceinline__ void task_segedit(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int g = -1;
    bool leads_large = false;
    if (e < 2 * nb) {
        u64 key = ld(B.half[e]);
        g = ld(C.vseg[half_x(key)]);
        leads_large = e == ld(B.seg_h0[g]) && ld(B.seg_cnt[g]) > SEG_COOP &&
                      ld(B.seg_first_ins[g]) >= 0;
        edit_half(C, B, tau0, e, key, g);
    }
    for (unsigned m = __ballot_sync(0xffffffffu, leads_large); m; m &= m - 1)
        place_insertions(C, B, __shfl_sync(0xffffffffu, g, __ffs(m) - 1), lane);
}

// J_ALLOC: per segment: new version, slab run, chunk table. A lane writes the chunk table
// of a short array itself; the whole warp writes a long one's (a hub's array has hundreds
// of chunks: one lane alone held its warp, and the batch, for microseconds).
__device__ __forceinline__ void task_alloc(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    const int cls = e < ld(B.ctl.nseg) ? ld(B.seg_cls[e]) : -1;
    int c0 = 0, nch = 0;
    if (cls >= 0) {
        const bool app = ld(B.seg_app[e]);
        int cur = ld(B.seg_cur[e]);
        int slab;
        if (app) {
            slab = ld(C.vers[cur].slab);  // the tail goes into the current version's run
        } else {
            int r = ld(B.seg_crank[e]), rn = ld(B.ctl.ring_n[cls]);
            slab = r < rn
                ? ld(C.slab_free[class_base(C, cls) + (ld(B.ctl.ring_h[cls]) + r) % (C.nslabs >> cls)])
                : (int)(ld(B.ctl.bump0[cls]) + (u64)(r - rn) * (1ULL << cls));
        }
        int vr = ld(B.seg_vrank[e]), vn = ld(B.ctl.ver_ring_n);
        int v = vr < vn ? ld(C.ver_free[(ld(B.ctl.ver_ring_h) + vr) % C.maxver])
                        : (int)(ld(B.ctl.ver_bump0) + vr - vn);
        int first_tau = tau0 + half_i(ld(B.half[ld(B.seg_first_ins[e])]));
        int x = ld(B.seg_x[e]);
        const i64 noff = app ? ld(B.seg_noff[e]) : (i64)slab * 32;
        if (CHECK) {
            int owner = atomicExch(&C.slab_owner[slab], v);
            if (owner != (app ? cur : -1)) check_fail(C, CHK_SLAB_TWICE, slab, owner, v);
            Version pv = load_version_list(C.vers + v);
            if (vr < vn && (pv.dt_max == INF_TS || __ldcg(C.head + pv.x) == v))
                check_fail(C, CHK_VERSION_LIVE, v, pv.x, pv.dt_max);
        }
        if (CHECK) {
            int n = ld(B.seg_oldlen[e]) + ld(B.seg_nins[e]);
            for (int k = 0; k < n; ++k)
                *reinterpret_cast<int4*>(C.entries + noff + k) = make_int4(CHECK_SENTINEL, 0, 0, 0);
        }
        // An append keeps the base (and its dead entries: ndead stays an upper bound) and
        // puts the tail at noff; J_SCAN sets the length (and a merge's base), or, with
        // FUSE_ALLOC_SCAN and no dead entry to compact in the batch, this task does: every
        // old entry is then live.
        int len = 0, blen = app ? ld(C.vers[cur].blen) : 0, toff = (int)(noff - (i64)slab * 32);
        if (FUSE_ALLOC_SCAN && ld(B.ctl.ncompact) == 0) {
            const int oldlen = ld(B.seg_oldlen[e]), n = oldlen + ld(B.seg_nins[e]);
            B.seg_live[e] = oldlen;
            if (app) len = blen + n;
            else len = blen = toff = n;
        }
        int4* nv = reinterpret_cast<int4*>(C.vers + v);  // the words of struct Version
        nv[0] = make_int4(slab, len, blen, toff);
        nv[1] = make_int4(first_tau, INF_TS, cur, x);
        nv[2] = make_int4(cls, app ? ld(C.vers[cur].ndead) : 0, 0, 0);
        if (cur >= 0) C.vers[cur].dt_max = first_tau - 1;
        if (app) C.vers[cur].kept = 1;  // its run is now the new version's
        B.seg_new[e] = v;
        B.seg_noff[e] = noff;
        c0 = ld(B.seg_chunk0[e]);
        nch = (ld(B.seg_oldlen[e]) + 31) / 32;
        if (nch <= ALLOC_OWN_CHUNKS)
            for (int k = 0; k < nch; ++k) C.chunkseg[c0 + k] = e;
    }
    const unsigned apps = __ballot_sync(0xffffffffu, cls >= 0 && ld(B.seg_app[e]));
    const unsigned runs = __ballot_sync(0xffffffffu, cls >= 0) & ~apps;
    if (lane == 0 && apps) atomicAdd(&C.st->appends, (u64)__popc(apps));
    if (lane == 0 && runs) atomicAdd(&C.st->new_runs, (u64)__popc(runs));
    for (unsigned m = __ballot_sync(0xffffffffu, nch > ALLOC_OWN_CHUNKS); m; m &= m - 1) {
        const int src = __ffs(m) - 1;
        const int g = t * 32 + src, g0 = __shfl_sync(0xffffffffu, c0, src);
        const int gn = __shfl_sync(0xffffffffu, nch, src);
        for (int k = lane; k < gn; k += 32) C.chunkseg[g0 + k] = g;
    }
}

// J_MASK: per MASK_UNROLL chunks: live masks of versions with dead entries
__device__ __forceinline__ void task_mask(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int nchunks = ld(B.ctl.nchunks);
#pragma unroll
    for (int u = 0; u < MASK_UNROLL; ++u) {
        const int c = t * MASK_UNROLL + u;
        if (c >= nchunks) break;  // uniform across the warp
        int g = ld(C.chunkseg[c]);
        if (ld(B.seg_dead[g]) == 0) continue;
        int j = (c - ld(B.seg_chunk0[g])) * 32 + lane;
        bool live = j < ld(B.seg_oldlen[g]) && __ldcg(&C.entries[old_at(B, g, j)].dt) == INF_TS;
        unsigned mask = __ballot_sync(0xffffffffu, live);
        if (lane == 0) C.chunkmask[c] = mask;
    }
}

// J_SCAN: per segment: live counts per chunk; new version length (run only when the batch
// has dead entries to compact, with FUSE_ALLOC_SCAN: J_ALLOC sets the lengths otherwise)
__device__ __forceinline__ void task_scan(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int ns = ld(B.ctl.nseg);
    bool mine = e < ns && ld(B.seg_cls[e]) >= 0;
    int oldlen = mine ? ld(B.seg_oldlen[e]) : 0;
    bool dead = mine && oldlen > 0 && ld(B.seg_dead[e]) > 0;
    int live = oldlen;
    if (dead && oldlen <= 32) {
        int c0 = ld(B.seg_chunk0[e]);
        live = __popc(ld(C.chunkmask[c0]));
        C.chunkoff[c0] = 0;
    }
    // Arrays of several chunks: the whole warp scans each in turn.
    unsigned big = __ballot_sync(0xffffffffu, dead && oldlen > 32);
    while (big) {
        int src = __ffs(big) - 1;
        big &= big - 1;
        int g = t * 32 + src;
        int c0 = ld(B.seg_chunk0[g]), c1 = c0 + (ld(B.seg_oldlen[g]) + 31) / 32;
        int carry = 0;
        for (int base = c0; base < c1; base += 32) {
            int c = base + lane;
            int cnt = c < c1 ? __popc(ld(C.chunkmask[c])) : 0;
            int incl = cnt;
            for (int d = 1; d < 32; d <<= 1) {
                int v = __shfl_up_sync(0xffffffffu, incl, d);
                if (lane >= d) incl += v;
            }
            if (c < c1) C.chunkoff[c] = carry + incl - cnt;
            carry += __shfl_sync(0xffffffffu, incl, 31);
        }
        if (lane == src) live = carry;
    }
    if (mine) {
        B.seg_live[e] = live;
        Version* nv = C.vers + ld(B.seg_new[e]);
        const int n = live + ld(B.seg_nins[e]);
        if (ld(B.seg_app[e])) {
            nv->len = ld(nv->blen) + n;
        } else {
            nv->len = n; nv->blen = n; nv->toff = n;
        }
    }
}

__device__ __forceinline__ void task_count(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane,
                                           bool from_segments);

// J_COPY: per chunk of old entries, then per inserted entry: the merge (with
// FUSE_COPY_PUBLISH, then J_PUBLISH for the segments a task completed, and J_COUNT's tasks
// after the insertions')
__device__ __forceinline__ void task_copy(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    int nct = cdiv(ld(B.ctl.nchunks), COPY_UNROLL);
    if (t < nct) { task_copy_chunks(C, B, t, lane); return; }
    const int nins = ld(B.ctl.nins), nit = cdiv(nins, 32);
    if (FUSE_COPY_PUBLISH && t >= nct + nit) {
        task_count(C, B, nb, tau0, t - nct - nit, lane, true);
        return;
    }
    // Inserted entries: after live old entries of the same neighbour, among themselves
    // by tau.
    int k = (t - nct) * 32 + lane;
    int g = -1;
    if (k < nins) {
        g = ld(B.ins_seg[k]);
        int y = ld(B.ins_y[k]), i = ld(B.ins_i[k]);
        int pos = (k - ld(B.seg_ins0[g])) + live_upto(C, B, g, y);
        *reinterpret_cast<int4*>(C.entries + ld(B.seg_noff[g]) + pos) =
            make_int4(y, ld(B.rec[i].label), tau0 + i, INF_TS);
    }
    if (FUSE_COPY_PUBLISH) {
        __threadfence();  // this lane's entry before its count
        publish_completed(C, B, tau0, g >= 0 ? copied_one(C, B, g) : -1, lane);
    }
}

// J_PUBLISH: per half edge: deletions after the first insertion; per segment: head,
__device__ __forceinline__ void task_publish(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int nht = cdiv(2 * nb, 32);
    if (t < nht) {
        // Deletions after the first insertion end the entry alive at their tau in the
        // new version.
        if (e >= 2 * nb) return;
        u64 key = ld(B.half[e]);
        int i = half_i(key);
        if (!applied(C, B, i, J_PUBLISH) || is_insert(B, i)) return;
        int g = ld(C.vseg[half_x(key)]);
        int first_ins = ld(B.seg_first_ins[g]);
        if (first_ins < 0 || e < first_ins) return;
        const int v = ld(B.seg_new[g]);
        end_deleted(C, B, tau0, g, v, load_version_list(C.vers + v), key);
        return;
    }
    // Publish the new versions and retire their predecessors into the GC queue.
    int g = (t - nht) * 32 + lane;
    bool on = g < ld(B.ctl.nseg);
    int v = on ? ld(B.seg_new[g]) : -1;
    int cur = v >= 0 ? ld(B.seg_cur[g]) : -1;
    if (v >= 0) vstore(C.head + ld(B.seg_x[g]), v);
    int at = warp_claim(&B.ctl.gcpos, (int)(cur >= 0), lane);
    if (cur >= 0) C.gcq[(ld(B.ctl.gcq_base) + at) % C.gcq_cap] = cur;
}

// J_COUNT: per record: version lengths, work items per (slot, plan)
__device__ __forceinline__ void task_count(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane,
                                           bool from_segments = false) {
    const int e = t * 32 + lane;  // element of an element job
    int items = 0;
    if (e < nb && applied(C, B, e, J_COUNT)) items = count_items(C, B, e, tau0 + e, from_segments);
    warp_claim(&B.ctl.nitems, items, lane);
}

// J_ITEMS: per record: update record, then its items
__device__ __forceinline__ void task_items(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    u64 t_part = JOB_TRACE == 9 ? gtime() : 0;
    const int e = t * 32 + lane;  // element of an element job
    bool on = e < nb;
    int tau = tau0 + e, items = on ? ld(B.nitems[e]) : 0;
    // DONE_LINES: no update of the task has an item, so the warp completes them all at once.
    const bool lines = DONE_LINES && __all_sync(0xffffffffu, items == 0);
    int outcome = 0;
    u64 taken = 0;
    if (on) {
        Upd* u = C.upd + (tau % MAXU);
        InRec r = load_rec(B.rec + e);
        outcome = ld(B.outcome[e]);
        taken = ld(B.taken[e]);
        u->a = r.a; u->b = r.b; u->elab = ld(B.elab[e]); u->op = r.kind == REC_INSERT ? 1 : -1;
        u->outcome = outcome;
        u->pending = items;
        u->tau = tau;
        u->t_taken = taken;
        u->t_start = 0;
        __threadfence();
        if (items == 0 && !lines) finalize_empty(C, tau);
    }
    ITEMS_PART(0xffffffffu, J_SEGSTART, t_part);
    if (lines) {
        finalize_empty_lines(C, tau, __popc(__ballot_sync(0xffffffffu, on)), outcome, taken, lane);
        ITEMS_PART(0xffffffffu, J_VERIFY, t_part);
        return;
    }
    u64 idx = warp_claim(&C.st->item_reserve, (u64)items, lane);
    ITEMS_PART(0xffffffffu, J_COUNT, t_part);
    if (items == 0) return;
    int a = ld(B.rec[e].a), b = ld(B.rec[e].b), elab = ld(B.elab[e]);
    int mlen[2] = {ld(B.len_a[e]), ld(B.len_b[e])};
    if (CHECK && FUSE_PUBLISH_COUNT) {  // the lengths J_COUNT took against the published heads'
        Adj aa, ab;
        find_versions(C, a, b, tau, aa, ab);
        if (aa.len != mlen[0] || ab.len != mlen[1])
            check_fail(C, CHK_COUNT_LISTS, tau, mlen[0] - aa.len, mlen[1] - ab.len);
    }
    int nqp = ld(B.ctl.nqp);
    const u64 first = idx;
    for (int k = 0; k < nqp; ++k) {
        int qp = ld(B.qp[k]);
        int nchunk = chunks_of(C, qp, tau, a, b, elab, mlen);
        for (int c = 0; c < nchunk; ++c, ++idx) {
            Item it;
            it.tau = tau; it.slot_plan = qp; it.level = 2; it.pos = c * CHUNK; it.end = -1;
            it.pad = 0;
            for (int x = 0; x < KMAX - 2; ++x) it.pre[x] = -1;
            write_item_body(C, reserve_item_slot(C, idx), it);
        }
    }
    ITEMS_PART(__activemask(), J_ALLOC, t_part);
    // One fence for all of the update's items, then their stamps.
    __threadfence();
    for (u64 j = first; j < idx; ++j) stamp_item(C, j);
    ITEMS_PART(__activemask(), J_PUBLISH, t_part);
}

// CHECK=1: a new version's entries [off, off + len) of vertex x are all written, sorted by
// (neighbour, ct), with at most one live entry per neighbour (one lane). `shape` locates a
// violation: 1000 * old length + 1e6 * insertions.
__device__ void check_version_whole(const Ctx& C, i64 off, int len, int tau0, i64 x, i64 shape) {
    for (int k = 0; k < len; ++k) {
        Entry q = load_entry(C.entries + off + k);
        if (q.nbr == CHECK_SENTINEL) { check_fail(C, CHK_HOLE, tau0, x, k + shape); break; }
        if (k == 0) continue;
        Entry p = load_entry(C.entries + off + k - 1);
        int bad = p.nbr > q.nbr || (p.nbr == q.nbr && p.ct > q.ct) ? CHK_ORDER
                : p.nbr == q.nbr && p.dt == INF_TS && q.dt == INF_TS ? CHK_TWO_LIVE : 0;
        if (bad) { check_fail(C, bad, tau0, x, k + shape); break; }
    }
}

// J_VERIFY: CHECK=1 only, after J_PUBLISH: per segment, the new version is whole
__device__ __forceinline__ void task_verify(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    if (e >= ld(B.ctl.nseg) || ld(B.seg_new[e]) < 0) return;
    // The run the batch wrote: a merge's whole list, or an append's tail.
    const Version ver = load_version_list(C.vers + ld(B.seg_new[e]));
    const bool app = ld(B.seg_app[e]);
    const int len = ver.len - (app ? ver.blen : 0);
    i64 off = ld(B.seg_noff[e]);
    i64 x = ld(B.seg_x[e]);
    // Where: the batch's first tau, the vertex, and k + 1000 * old length + 1e6 * insertions.
    i64 shape = 1000LL * ld(B.seg_oldlen[e]) + 1000000LL * ld(B.seg_nins[e]);
    if (len != ld(B.seg_live[e]) + ld(B.seg_nins[e]))
        check_fail(C, CHK_LEN, tau0, x, len + shape);
    // A tail's live neighbours are not live in the base too.
    for (int k = 0; app && k < len; ++k) {
        const Entry q = load_entry(C.entries + off + k);
        if (q.dt == INF_TS && run_find_live(C, (i64)ver.slab * 32, ver.blen, q.nbr) >= 0) {
            check_fail(C, CHK_TWO_LIVE, tau0, x, k + shape);
            break;
        }
    }
    for (int k = ld(B.seg_ins0[e]), k1 = k + ld(B.seg_nins[e]); k < k1; ++k) {
        int y = ld(B.ins_y[k]), ct = tau0 + ld(B.ins_i[k]);
        bool found = false;
        for (int j = lower_nbr(C, off, len, y); j < len && !found; ++j) {
            Entry q = load_entry(C.entries + off + j);
            if (q.nbr != y) break;
            found = q.ct == ct;
        }
        if (!found) check_fail(C, CHK_INSERT_MISSING, ct, x, y);
    }
    check_version_whole(C, off, len, tau0, x, shape);
}

// The deletion path (DELETE_PATH, updater.cuh's apply_deletions): a bulk batch of deletions
// alone, in two jobs before J_ITEMS. Deletions end their entries in place and make no
// version, so the pipeline's segments, copies and publication have nothing to do.

// J_CLASSIFY's kind, a batch of deletions: per half edge (of update e = hh / 2, side hh % 2:
// the pair's smaller endpoint, then the larger), the edge's entry live when the batch began
// in that endpoint's array (B.tmp[hh], -1 if none). The smaller endpoint's lowers its dt to
// the update's tau: after the job it holds the tau of the batch's first deletion of the edge,
// whichever lane came first. That lane (side 0) also writes what J_HALVES writes of a record:
// the labels, the external ids, no items yet; both zero half of the update's count slots.
__device__ __forceinline__ void task_del_find(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int hh = t * 32 + lane, e = hh >> 1, side = hh & 1;  // an element job of half edges
    if (hh >= 2 * nb) return;
    const InRec r = load_rec(B.rec + e);
    if (side == 0) take_record(C, B, r, e);
    zero_counts(C, tau0 + e, side, 2);
    const int lo = min(r.a, r.b), hi = max(r.a, r.b);
    const int x = side ? hi : lo, y = side ? lo : hi;
    const i64 ent = find_live_since(C, __ldcg(C.head + x), y, tau0);
    B.tmp[hh] = (u64)ent;
    if (side == 0 && ent >= 0) atomicMin(&C.entries[ent].dt, tau0 + e);
}

// J_COUNT's kind, a batch of deletions: per update, its outcome (applied when its tau is the
// one the smaller endpoint's entry kept: the batch's first deletion of a live edge; else a
// no-op, as J_CLASSIFY decides), the larger endpoint's entry ended at the same tau, both
// current versions' dead-entry counts (as J_SEGINFO keeps them), and its work items (as
// J_COUNT, from the published heads: the batch makes no version).
__device__ __forceinline__ void task_del_apply(const Ctx& C, Batch& B, int nb, int tau0, int t, int lane) {
    const int e = t * 32 + lane;  // element of an element job
    int items = 0;
    if (e < nb) {
        const int tau = tau0 + e, a = ld(B.rec[e].a), b = ld(B.rec[e].b);
        const int lo = min(a, b), hi = max(a, b);
        const i64 el = (i64)ld(B.tmp[2 * e]), eh = (i64)ld(B.tmp[2 * e + 1]);
        if (CHECK && (el >= 0) != (eh >= 0)) check_fail(C, CHK_ASYMMETRIC, tau, lo, hi);
        const bool mine = el >= 0 && __ldcg(&C.entries[el].dt) == tau;
        if (mine) {
            atomicAdd(&C.vers[__ldcg(C.head + lo)].ndead, 1);
            if (eh >= 0) {
                C.entries[eh].dt = tau;
                atomicAdd(&C.vers[__ldcg(C.head + hi)].ndead, 1);
            }
        }
        set_outcome(C, B, e, mine, el >= 0 ? __ldcg(&C.entries[el].elab) : 0);
        if (mine) items = count_items(C, B, e, tau, false);
    }
    warp_claim(&B.ctl.nitems, items, lane);
}

// Run task t of job `kind` (whole warp): one function per job kind (above).
__device__ __noinline__ void run_task(const Ctx& C, int kind, int t, int lane) {
    Batch& B = *C.batch;
    const int nb = ld(B.ctl.nb), tau0 = ld(B.ctl.tau0);
    switch (kind) {
#if READ_JOB
    case J_READ:
        read_run(C, ld(B.run_n), ld(B.run_at), ld(B.run_pos), ld(B.run_mirror), &B.run_stop, t, lane);
        break;
#endif
    case J_HALVES: task_halves(C, B, nb, tau0, t, lane); break;
    case J_SEGCOUNT: task_segcount(C, B, nb, tau0, t, lane); break;
    case J_SEGSTART: task_segstart(C, B, nb, tau0, t, lane); break;
    case J_PLACE:
        if (FUSE_SEGSTART_PLACE) task_place_claiming(C, B, nb, tau0, t, lane);
        else task_place(C, B, nb, tau0, t, lane);
        break;
    case J_ORDER: task_order(C, B, nb, tau0, t, lane); break;
    case J_CLASSIFY:
#if DELETE_PATH  // (at 0, even a dead call here changed the build: kept as session 37 ran it)
        if (deletions_only(B)) { task_del_find(C, B, nb, tau0, t, lane); break; }
#endif
        task_classify(C, B, nb, tau0, t, lane);
        break;
    case J_SEGINFO: task_seginfo(C, B, nb, tau0, t, lane); break;
    case J_SEGEDIT:  // with FUSE_EDIT_ALLOC, tasks past the half edges' are J_ALLOC's
        if (FUSE_EDIT_ALLOC && t >= cdiv(2 * nb, 32)) task_alloc(C, B, nb, tau0, t - cdiv(2 * nb, 32), lane);
        else task_segedit(C, B, nb, tau0, t, lane);
        break;
    case J_ALLOC: task_alloc(C, B, nb, tau0, t, lane); break;
    case J_MASK: task_mask(C, B, nb, tau0, t, lane); break;
    case J_SCAN: task_scan(C, B, nb, tau0, t, lane); break;
    case J_COPY: task_copy(C, B, nb, tau0, t, lane); break;
    case J_PUBLISH: {  // with FUSE_PUBLISH_COUNT, tasks past the segments' are J_COUNT's
        const int np = cdiv(2 * nb, 32) + cdiv(ld(B.ctl.nseg), 32);
        if (FUSE_PUBLISH_COUNT && t >= np) task_count(C, B, nb, tau0, t - np, lane, true);
        else task_publish(C, B, nb, tau0, t, lane);
        break;
    }
    case J_COUNT:
#if DELETE_PATH
        if (deletions_only(B)) { task_del_apply(C, B, nb, tau0, t, lane); break; }
#endif
        task_count(C, B, nb, tau0, t, lane);
        break;
    case J_ITEMS: task_items(C, B, nb, tau0, t, lane); break;
    case J_VERIFY: task_verify(C, B, nb, tau0, t, lane); break;
    }
}

// Run task t of job `kind` (whole warp), every lane's writes, not only lane 0's, visible
// before it returns (before the task counts as done); JOB_TRACE >= 2: the ns it took.
__device__ __forceinline__ u64 run_task_fenced(const Ctx& C, int kind, int t, int lane) {
    if (JOB_TRACE == 7 && kind == J_CLASSIFY) probe_costs(C, lane);
    const u64 t0 = JOB_TRACE >= 2 ? gtime() : 0;
    run_task(C, kind, t, lane);
    if (JOB_TRACE == 7 && kind == J_CLASSIFY) {
        __syncwarp();
        if (lane == 0) count_task(C, false, J_PUBLISH, gtime_ordered() - t0);
    }
    __threadfence();
    warp_join();
    return JOB_TRACE >= 2 ? gtime() - t0 : 0;
}

// Claim and run tasks of the current job until none is left (whole warp).
__device__ __noinline__ void help(const Ctx& C, int lane, bool updater = false) {
    while (true) {
        u64 old = 0, w = 0, t_claim = 0;
        if (lane == 0) {
            u64 c = vload(&C.st->job_cursor);
            w = vload(&C.st->job_word);
            bool allowed = updater || ((HELP_MASK >> ((w >> 32) & 0xff)) & 1);
            if (allowed && (c >> 40) == (w >> 40) && (c & MASK40) < (w & 0xffffffffULL)) {
                if (JOB_TRACE) t_claim = gtime();  // just before the claim, which orders them
                old = atomicAdd(&C.st->job_cursor, 1ULL);
                __threadfence();
                w = vload(&C.st->job_word);  // the job the claimed task belongs to, if current
            } else {
                old = ~0ULL;
            }
        }
        old = __shfl_sync(0xffffffffu, old, 0);
        w = __shfl_sync(0xffffffffu, w, 0);
        if (old == ~0ULL || (old >> 40) != (w >> 40) || (old & MASK40) >= (w & 0xffffffffULL)) return;
        __threadfence();  // every lane acquires what earlier jobs wrote, not only lane 0
        const int kind = (int)((w >> 32) & 0xff), t = (int)(old & MASK40);
        if (JOB_TRACE && lane == 0) {  // the first and the last task's claim times
            if (t == 0) vstore(&C.st->trace_first, t_claim);
            if (t + 1 == (w & 0xffffffffULL)) vstore(&C.st->trace_last, t_claim);
        }
        const u64 dt = run_task_fenced(C, kind, t, lane);
        if (JOB_TRACE >= 2 && lane == 0) {  // the task's own time, by runner and bucket
            count_task(C, updater, kind, dt);
            atomicMax((unsigned long long*)&C.st->trace_slowest, (unsigned long long)dt);
        }
        if ((JOB_TRACE == 3 || JOB_TRACE == 4) && kind == J_CLASSIFY) {
            // The same task again (it only writes what it computes): its code in the SM's
            // instruction caches and its data in L2 now. JOB_TRACE=4: a neighbouring task
            // (its code warm, its lists not). Counted as J_VERIFY's, which runs only with
            // CHECK=1.
            const int n = (int)(w & 0xffffffffULL);
            const int again = JOB_TRACE == 3 ? t : t + 1 < n ? t + 1 : max(t - 1, 0);
            const u64 dt_again = run_task_fenced(C, kind, again, lane);
            if (lane == 0) count_task(C, updater, J_VERIFY, dt_again);
        }
        if (CHECK && lane == 0) {
            u64 t = old & MASK40, seq = w >> 40;
            if (atomicExch(&C.task_mark[t], seq) == seq)
                check_fail(C, CHK_TASK_TWICE, (w >> 32) & 0xff, t, seq);
            __threadfence();
        }
        if (lane == 0) atomicAdd(&C.st->job_done, 1ULL);
    }
}

// Post a job of n > 0 tasks, work on it, and return once every task has finished (all
// updater warps call it together).
__device__ void job_body(const Ctx& C, int kind, int n, int w, int lane) {
    const u64 tf = w == 0 && lane == 0 ? gtime() : 0;
    u64 t_post = 0;  // JOB_TRACE
    __threadfence();
    if (w == 0 && lane == 0) time_step(C, STEP_FENCE, tf);
    named_barrier_updaters();
    if (n <= N_UPDATERS) {
        // A small job (small batches at low update rates): one task per updater warp,
        // without the round trip through the helpers.
        if (w < n) run_task(C, kind, w, lane);
        __threadfence();
        named_barrier_updaters();
        return;
    }
    if (w == 0 && lane == 0) {
        State* st = C.st;
        u64 seq = ((vload(&st->job_word) >> 40) + 1) & 0xffffffULL;
        vstore(&st->job_done, 0ULL);
        __threadfence();
        vstore(&st->job_word, (seq << 40) | ((u64)kind << 32) | (u64)n);
        __threadfence();
        if (JOB_TRACE) t_post = gtime();
        vstore(&st->job_cursor, seq << 40);
    }
    named_barrier_updaters();
    help(C, lane, true);
    if (w == 0 && lane == 0) {
        // Relaying now and then: a task may wait for ring room only a relay grants.
        for (u64 spins = 1; vload(&C.st->job_done) < (u64)n; ++spins) {
            if (spins % 1024 == 0) relay(C);
            __nanosleep(64);
        }
        __threadfence();
        if (JOB_TRACE) {  // clamped: two warps' clock reads are not ordered with their claims
            const u64 done = gtime(), first = vload(&C.st->trace_first), last = vload(&C.st->trace_last);
            C.st->trace_ns[0][kind] += first > t_post ? first - t_post : 0;
            C.st->trace_ns[1][kind] += last > first ? last - first : 0;
            C.st->trace_ns[2][kind] += done > last ? done - last : 0;
            if (JOB_TRACE >= 2) {
                C.st->task_slowest_ns[kind] += vload(&C.st->trace_slowest);
                vstore(&C.st->trace_slowest, 0ULL);
            }
        }
    }
    if (CHECK && w == 0) {
        warp_join();
        __threadfence();
        u64 seq = vload(&C.st->job_word) >> 40;
        for (int t = lane; t < n; t += 32)
            if (vload(&C.task_mark[t]) != seq) check_fail(C, CHK_JOB_EARLY, kind, t, n);
    }
    named_barrier_updaters();
    __threadfence();
}

// Post a job of n tasks, work on it, and return once every task has finished (all updater
// warps call it together); updater w0 times it.
__device__ void job(const Ctx& C, int kind, int n, int w, int lane) {
    if (n <= 0) return;
    const bool clock = w == 0 && lane == 0;
    const u64 t0 = clock ? gtime() : 0;
    job_body(C, kind, n, w, lane);
    if (clock) time_step(C, kind, t0);
}
