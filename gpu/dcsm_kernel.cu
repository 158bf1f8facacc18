// dcsm_kernel.cu -- the DCSM persistent, warp-specialised kernel.
//
// Design: DCSM (continuous subgraph matching with inter-batch parallelism). Sections referred
// to below: 4 (incremental matching over a multi-version graph, Properties 1-3), 5 (the graph
// updater and the parallel multi-array copy), 6 (garbage collection). Launched once by
// gpu/engine.py (cooperative launch, so every block is co-resident and warps may spin on each
// other); it runs until the host sends STOP, and a relaunch continues on the same state.
//
// Roles by warp (block 0 holds the first N_UPDATERS warps and the collector):
//   * graph-updater warps [0, N_UPDATERS) of block 0. Warp 0 is the ONLY reader of host
//     memory (gpu-facts rule 1): it forms batches from the input ring, applies control
//     commands, relays the host's consumption counters into device memory. A batch closes
//     once it holds BATCH_B updates or BATCH_TIMEOUT_NS have passed since its first one, and
//     nothing more is already waiting; under a backlog it grows up to BATCH_CAP updates, so a
//     hub array is copied once for many updates. The updater applies a batch as a sequence
//     of data-parallel JOBS (below): the updater warps work on every job themselves (the
//     "super-warp"), and idle executor warps join in, so a batch is applied by as much of
//     the GPU as is not busy matching.
//   * the garbage-collector warp N_UPDATERS of block 0: advances the GC pointer over
//     completed updates and returns retired versions to the pools.
//   * executor warps: everything else. Each takes a ticket (one atomicAdd, gpu-facts rule
//     4) and waits on its own item slot's stamp; while waiting it helps with the updater's
//     current job. An item is (update, query slot, plan, level, range of the level's
//     candidate list, the matched prefix). A warp whose search tree is large hands the
//     untouched rest of a level's range to waiting warps as a new item (work donation).
//
// Time. Local update timestamps tau = 1, 2, ... in stream order (the host maps them to seqs);
// the initial graph has tau 0. An entry with lifetime [ct, dt] (inclusive; DCSM writes the
// same as (ct-1, dt]) is visible to the update tau iff ct <= tau <= dt: an insertion at tau
// sets ct = tau (the insertion sees its own edge), a deletion at tau sets dt = tau (the
// deletion still sees the edge). A version with lifetime [ct_min, dt_max] is the one update
// tau reads iff ct_min <= tau <= dt_max. Every update thus sees exactly the graph of the
// sequential semantics, so a match is reported once however many of its edges share a batch.
//
// Shared structures (dtype, layout; who allocates; who writes / reads):
//   vlab   int32[maxv]         vertex labels; host allocates; updater jobs write (from input
//                              records), executors read.
//   ext    int64[maxv]         external vertex ids (symmetry breaking compares them); as vlab.
//   head   int32[maxv]         newest version of each vertex's neighbour array, -1 if none;
//                              updater jobs write (after the version is complete), all read.
//   vmark, vseg int32[maxv]    batch number that last touched the vertex, and its segment
//                              in that batch; updater jobs only.
//   entries Entry[nslabs*32]   slab pool, 32 entries a slab, 16 B an entry {nbr, elab, ct,
//                              dt}; a version owns a run of 2^cls consecutive slabs, entries
//                              sorted by (nbr, ct). Updater jobs write new runs and dt edits;
//                              executors read through L2 (__ldcg: L1 is not coherent).
//   vers   Version[maxver]     {slab, len, cls, ct_min, dt_max, prev, ndead, x}; updater
//                              jobs write, executors and GC read.
//   slab_owner int32[nslabs]   version owning the slab run that starts there, -1 if free;
//                              written only with CHECK=1 (J_ALLOC claims, GC releases).
//   task_mark u64[MAXCHUNK]    CHECK=1 only: job seq of the last run of each task index;
//                              the warp that ran the task writes, updater w0 reads.
//   slab_free int32[sum_c nslabs>>c]  per-class free rings of slab-run starts: GC pushes,
//                              updater w0 pops (single producer, single consumer).
//   ver_free int32[maxver]     free ring of version ids (GC pushes, updater pops).
//   gcq    int32[gcq_cap]      retired versions (the GC graph's frontier, dt_max order up to
//                              a batch): updater jobs append, GC consumes.
//   upd    Upd[MAXU]           per-update record, slot tau % MAXU: updater jobs write,
//                              executors change `pending`, the finishing warp sets `done`.
//   upd_count u64[MAXU*QMAX]   match counts per (update, query slot): executors atomicAdd.
//   items  Item[MAXI]          work item ring, a multi-producer multi-consumer queue:
//                              producers (updater jobs, donating executors) reserve an index
//                              with atomicAdd on st.item_reserve, wait until item_free says
//                              the slot was read, write the item, then item_stamp = index;
//                              the consumer holding that ticket reads it and sets item_free.
//   plans  int32[QMAX*PMAX*PLAN_INTS]  plan blobs (layout below): host uploads before the
//                              REGISTER command; executors and updater jobs read.
//   chunkmask u32, chunkoff int32, chunkseg int32 [MAXCHUNK]  the multi-array copy's 32-entry
//                              chunks: live mask, live entries before it, its segment.
//   batch  Batch               the batch being applied (records, half edges, segments);
//                              updater w0 writes its control fields, jobs write the rest.
//   st     State               counters (below); mixed writers as commented per field.
//   Host-mapped (pinned):
//   in_ring InRec[in_cap]      host writes records then hctl->in_tail; updater w0 reads.
//   hctl   HostCtl             host writes; updater w0 reads (relays into st).
//   dstat  DevStatus           device writes (w0: in_consumed; GC: pool stats); host reads.
//   out    int32[out_cap]      match records [stamp, tau, slot, v0..v(n-1)]; executors write
//                              the body, then the stamp; host reads in order.
//   done   Done[MAXU], done_counts u64[MAXU*QMAX]: per-update completion records; the
//                              finishing warp writes counts and times, then the stamp tau.
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
// Warp discipline. Wherever lanes write and one lane then publishes (a task done, an item
// slot freed, a completion stamped), the warp first meets in warp_join(), never in a bare
// __syncwarp() (see warp_join). CHECK=1 compiles in self-checks of the invariants above
// (enum CheckCode); gpu/engine.py raises the first violation.

#ifndef N_UPDATERS
#define N_UPDATERS 4
#endif
#ifndef BATCH_B
#define BATCH_B 64
#endif
#ifndef BATCH_CAP
#define BATCH_CAP 4096
#endif
#ifndef QMAX
#define QMAX 32
#endif
#ifndef PMAX
#define PMAX 64
#endif
#ifndef MAXU
#define MAXU 65536
#endif
#ifndef MAXI
#define MAXI 524288
#endif
#ifndef MAXCHUNK
#define MAXCHUNK 2097152
#endif
#ifndef NCLASS
#define NCLASS 24
#endif
#ifndef CHUNK
#define CHUNK 1024
#endif
#ifndef BATCH_TIMEOUT_NS
#define BATCH_TIMEOUT_NS 125000
#endif
// CHECK=1 compiles in self-checks of the invariants the design rests on (below, "Self-checks").
#ifndef CHECK
#define CHECK 0
#endif

#if QMAX > 32
#error "QMAX must be at most 32 (one lane per query slot in finalize_update)"
#endif
#if BATCH_CAP > 32768
#error "BATCH_CAP must be at most 32768 (15 bits of update index in a half edge)"
#endif

#define KMAX 16
#define INF_TS 0x7fffffff
#define ANY (-1)
#define HMAX (2 * BATCH_CAP)
#define MAXQP (QMAX * PMAX)

// Input record kinds.
#define REC_INSERT 1
#define REC_DELETE 2
#define REC_REGISTER 3
#define REC_UNREGISTER 4
#define REC_STOP 5

// Outcomes (dcsm.model.OUTCOME_*).
#define OUT_APPLIED 0
#define OUT_NOOP 1

// Errors reported in dstat->error.
#define ERR_POOL_EXHAUSTED 1
#define ERR_VERSIONS_EXHAUSTED 2
#define ERR_CHUNKS 3

// Plan blob: int32 fields of one (slot, plan).
#define PL_N 0
#define PL_ELAB 1
#define PL_VLABEL 2
#define PL_POS (PL_VLABEL + KMAX)
#define PL_BNCNT (PL_POS + KMAX)
#define PL_BNPOS (PL_BNCNT + KMAX)
#define PL_BNELAB (PL_BNPOS + KMAX * KMAX)
#define PL_SYMLT (PL_BNELAB + KMAX * KMAX)
#define PL_SYMGT (PL_SYMLT + KMAX)
#define PLAN_INTS (PL_SYMGT + KMAX)

typedef unsigned long long u64;
typedef long long i64;

struct Entry { int nbr; int elab; int ct; int dt; };
// ndead counts the version's dead entries (dt != INF): a copy of a version without any skips
// the compaction scan. x is the vertex whose neighbour array it is (self-checks read it).
struct Version { int slab; int len; int cls; int ct_min; int dt_max; int prev; int ndead; int x; };

struct InRec {
    int kind;      // REC_*
    int a, b;      // internal ids (REGISTER/UNREGISTER: a = slot, b = count_only)
    int label;     // edge label (REGISTER: number of plans)
    int a_label, b_label;
    i64 ext_a, ext_b;
    i64 arrival_ns;
};

struct Upd {
    int a, b, elab, op;
    int outcome, pending;
    i64 tau;           // which tau occupies the slot
    i64 done;          // == tau once complete (GC and slot reuse read it)
    u64 t_taken, t_start;
};

// A work item: enumerate the matches of update tau for (slot, plan) whose first `level`
// query vertices are m[0] = a, m[1] = b, m[2..level-1] = pre[...], taking level's candidates
// from positions [pos, end) of its scan list (end < 0: pos + CHUNK, clipped to the list).
#define ITEM_INTS 20
struct __align__(16) Item { int tau; int slot_plan; int level; int pos; int end; int pad; int pre[KMAX - 2]; };

struct Done {
    i64 tau;           // written last: the record is valid once it equals the tau expected
    int outcome, nitems;
    u64 t_taken, t_start, t_finish;
    i64 pad;
};

struct HostCtl { u64 in_tail; u64 out_consumed; u64 done_consumed; u64 pad; };

struct DevStatus {
    u64 in_consumed;      // updater w0
    u64 gc_ptr;           // GC
    u64 slabs_in_use;     // GC (snapshot of st)
    u64 versions_in_use;  // GC
    u64 clock_ns;         // w0 at launch: %globaltimer, for host clock calibration
    u64 running;          // w0: 1 while running, 0 after a clean stop
    u64 error;            // ERR_* (fatal; the kernel stops)
    u64 completed;        // GC: number of completed updates
    u64 gc_freed;         // GC: versions returned so far
    u64 pad[7];
};

struct State {
    u64 in_head;          // w0: input records consumed
    u64 next_tau;         // w0: next tau to assign
    u64 item_reserve;     // item producers atomicAdd
    u64 item_ticket;      // executors atomicAdd
    u64 out_reserve;      // executors atomicAdd (int32 units)
    u64 out_consumed;     // w0 relays from host
    u64 done_consumed;    // w0 relays from host
    u64 completed;        // finishing warps atomicAdd
    u64 gc_ptr;           // GC writes; updater reads
    u64 gcq_head;         // GC
    u64 gcq_tail;         // w0
    u64 slab_bump;        // w0 (host sets after bulk load)
    u64 ver_bump;         // w0
    u64 ver_free_head;    // w0
    u64 ver_free_tail;    // GC
    u64 slabs_in_use;     // w0 and GC atomicAdd
    u64 versions_in_use;  // w0 and GC atomicAdd
    u64 stop;             // w0 sets when draining is over; all roles exit
    u64 hold;             // host: fixed-batch baseline, a batch closes only at STOP
    u64 batch_no;         // w0: batches applied (vmark stamps)
    u64 job_word;         // w0: current job (seq << 40 | kind << 32 | tasks)
    u64 job_cursor;       // w0 resets, every helper atomicAdds (seq << 40 | next task)
    u64 job_done;         // w0 resets, helpers atomicAdd finished tasks
    u64 donated;          // executors: items handed to waiting warps
    u64 free_head[NCLASS];
    u64 free_tail[NCLASS];
    i64 q_from[QMAX];     // w0 (REGISTER): first tau the slot sees
    i64 q_until[QMAX];    // w0 (UNREGISTER): first tau it no longer sees
    int q_count[QMAX];    // w0: 1 = count only
    int q_nplans[QMAX];   // w0
    // w0 lane 0: %globaltimer ns spent per updater phase, summed over batches: forming
    // (first record seen -> batch closed), classify+allocate, copy, publish versions,
    // publish items; then the number of batches and of updates they held.
    u64 phase_ns[5];
    u64 batches, batched_updates;
    u64 check_count[32];     // CHECK=1: violations per CHK_* code
    i64 check_first[32][3];  // the first violation of each code: three values that locate it
};

// The batch being applied. Half edge h = 2i + side of record i is the endpoint x = a
// (side 0) or b (side 1) of its update; key (x << 32 | i << 1 | side). A segment is one
// vertex whose neighbour array the batch touches; its half edges sit in half[h0, h0 + cnt)
// in update order. Written by updater w0 (ctl.nb, tau0, stop, the allocation ranges) and by
// job tasks (everything else, each element by exactly one lane); read by job tasks.
struct BatchCtl {
    int nb, tau0;
    int nseg, hcur, nchunks, nins, nver, npush, gcpos, nqp, ncompact, nitems;
    int class_cnt[NCLASS];
    int ring_n[NCLASS];
    u64 ring_h[NCLASS];
    u64 bump0[NCLASS];
    u64 ver_ring_h, ver_bump0;
    int ver_ring_n, pad1;
    u64 gcq_base;
};

struct Batch {
    BatchCtl ctl;
    __align__(16) InRec rec[BATCH_CAP];
    u64 taken[BATCH_CAP];
    int outcome[BATCH_CAP], elab[BATCH_CAP], nitems[BATCH_CAP], len_a[BATCH_CAP], len_b[BATCH_CAP];
    u64 hkey[HMAX];             // by half edge index
    int hseg[HMAX], hrank[HMAX], hsorted[HMAX];
    u64 tmp[HMAX];
    int tmp_y[HMAX];            // other endpoint of tmp[]'s half edge
    u64 half[HMAX];             // by segment, then update index
    u64 hpair[HMAX];            // by segment, then (other endpoint, update index)
    int hpair_y[HMAX], hpair_pos[HMAX];  // other endpoint; position of half edge h in hpair
    int seg_x[HMAX], seg_cnt[HMAX], seg_h0[HMAX], seg_cur[HMAX], seg_new[HMAX];
    int seg_first_ins[HMAX];    // position in half[] of the first applied insertion, -1 if none
    int seg_nins[HMAX], seg_oldlen[HMAX], seg_dead[HMAX], seg_off[HMAX], seg_noff[HMAX];
    int seg_cls[HMAX], seg_chunk0[HMAX], seg_live[HMAX], seg_ins0[HMAX];
    int seg_crank[HMAX], seg_vrank[HMAX];
    int ins_y[HMAX], ins_i[HMAX], ins_seg[HMAX];  // applied insertions by segment, (y, i) order
    int qp[MAXQP];              // (slot << 16 | plan) live somewhere in the batch
    int outcome_shadow[BATCH_CAP];  // CHECK=1: batch_no << 4 | outcome, written beside outcome
};

// Every pointer and size the kernel needs; all fields 8 bytes so the host can fill it as
// a uint64 array (gpu/engine.py: CTX_FIELDS, same order).
struct Ctx {
    int* vlab; i64* ext; int* head; u64 maxv;
    int* vmark; int* vseg;
    Entry* entries; u64 nslabs;
    Version* vers; u64 maxver;
    int* slab_free; int* ver_free;
    int* gcq; u64 gcq_cap;
    Upd* upd; u64* upd_count;
    Item* items; i64* item_free; i64* item_stamp;
    int* plans;
    unsigned* chunkmask; int* chunkoff; int* chunkseg;
    Batch* batch;
    State* st;
    InRec* in_ring; u64 in_cap;
    HostCtl* hctl; DevStatus* dstat;
    int* out; u64 out_cap;
    Done* done; u64* done_counts;
    int* slab_owner;
    u64* task_mark;   // CHECK=1: job seq of the last run of each task index
};

// Sizes of the structures the host allocates or mirrors (checked by gpu/engine.py).
extern "C" __global__ void dcsm_sizes(u64* out) {
    out[0] = sizeof(State);
    out[1] = sizeof(Batch);
    out[2] = sizeof(Item);
    out[3] = sizeof(Upd);
    out[4] = sizeof(Done);
    out[5] = sizeof(InRec);
}

// ---------------------------------------------------------------------------------------
// Small helpers

__device__ __forceinline__ u64 gtime() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ u64 vload(const u64* p) { return *(const volatile u64*)p; }
__device__ __forceinline__ i64 vload(const i64* p) { return *(const volatile i64*)p; }
__device__ __forceinline__ int vload(const int* p) { return *(const volatile int*)p; }
__device__ __forceinline__ void vstore(u64* p, u64 v) { *(volatile u64*)p = v; }
__device__ __forceinline__ void vstore(i64* p, i64 v) { *(volatile i64*)p = v; }
__device__ __forceinline__ void vstore(int* p, int v) { *(volatile int*)p = v; }

// Self-checks (CHECK=1). Each names an invariant whose violation would corrupt results
// silently; the first violation is recorded in st->check_first and gpu/engine.py raises it.
enum CheckCode {
    CHK_SLAB_TWICE = 1,   // J_ALLOC: a slab run handed out while another version owns it
    CHK_VERSION_LIVE,     // J_ALLOC: a recycled version id that is still current (or never retired)
    CHK_SLAB_OWNER,       // GC: the run freed is not owned by the version being freed
    CHK_FREE_CURRENT,     // GC: freeing the current version of its vertex
    CHK_WALK_FOREIGN,     // find_version: a version of another vertex on x's chain (reused id)
    CHK_WALK_EXPIRED,     // find_version: the version found ended before tau
    CHK_ASYMMETRIC,       // J_CLASSIFY: edge (a, b) live in one endpoint's array only
    CHK_DELETE_MISSING,   // J_SEGEDIT / J_PUBLISH: an applied deletion found no live entry
    CHK_UNSORTED,         // J_SEGINFO: a head version not sorted by (nbr, ct), or two live entries
    CHK_WRONG_VERTEX,     // J_SEGINFO: the head version belongs to another vertex
    CHK_MOVED,            // run_item: an update's versions changed while it ran
    CHK_SEGMENT,          // J_SEGCOUNT: a half edge's segment belongs to another vertex
    CHK_HOLE,             // J_VERIFY: an entry of a new version was never written
    CHK_ORDER,            // J_VERIFY: a new version not sorted by (nbr, ct)
    CHK_TWO_LIVE,         // J_VERIFY: two live entries of one neighbour in a new version
    CHK_DELETE_DEAD,      // J_PUBLISH: the entry an applied deletion ends is already dead
    CHK_LEN,              // J_PUBLISH / J_VERIFY: a new version's length is not live + inserted
    CHK_INSERT_MISSING,   // J_VERIFY: an applied insertion has no entry in the new version
    CHK_JOB_EARLY,        // job(): a task had not finished when the job was seen complete
    CHK_TASK_TWICE,       // help(): a task ran twice
    CHK_CHAIN,            // J_CLASSIFY: the pair's chain in the segment order disagrees with a
                          //   replay of every earlier record of the batch
    CHK_STALE_OUTCOME,    // J_SEGINFO / J_SEGEDIT: an outcome read is not this batch's
    CHK_OUTCOME_DRIFT,    // J_SEGINFO / J_SEGEDIT: an outcome differs from its shadow copy
    CHK_SEG_DRIFT,        // J_SEGEDIT: the segment's first insertion or insertion count differs
                          //   from what J_SEGINFO computed
};

#define CHECK_SENTINEL (-7)

__device__ __noinline__ void check_fail(const Ctx& C, int code, i64 a, i64 b, i64 c) {
    if (atomicAdd(&C.st->check_count[code], 1ULL) == 0) {
        i64* f = C.st->check_first[code];
        f[0] = a; f[1] = b; f[2] = c;
    }
}

// L2 reads (L1 is not coherent across blocks; everything another warp may have written
// in this launch is read this way).
template <typename T> __device__ __forceinline__ T ld(const T& x) { return __ldcg(&x); }

__device__ __forceinline__ Entry load_entry(const Entry* e) {
    int4 v = __ldcg(reinterpret_cast<const int4*>(e));
    Entry r; r.nbr = v.x; r.elab = v.y; r.ct = v.z; r.dt = v.w;
    return r;
}

__device__ __forceinline__ Version load_version(const Version* v) {
    int4 a = __ldcg(reinterpret_cast<const int4*>(v));
    int4 b = __ldcg(reinterpret_cast<const int4*>(v) + 1);
    Version r; r.slab = a.x; r.len = a.y; r.cls = a.z; r.ct_min = a.w; r.dt_max = b.x; r.prev = b.y;
    r.ndead = b.z; r.x = b.w;
    return r;
}

// A record from the batch (L2) or, with `host`, from the pinned input ring (uncached: the
// ring's slots are rewritten on every lap).
__device__ __forceinline__ InRec load_rec(const InRec* p, bool host = false) {
    const int4* s = reinterpret_cast<const int4*>(p);
    int4 w0, w1, w2;
    if (host) { w0 = __ldcv(s); w1 = __ldcv(s + 1); w2 = __ldcv(s + 2); }
    else { w0 = __ldcg(s); w1 = __ldcg(s + 1); w2 = __ldcg(s + 2); }
    InRec r;
    r.kind = w0.x; r.a = w0.y; r.b = w0.z; r.label = w0.w;
    r.a_label = w1.x; r.b_label = w1.y;
    r.ext_a = ((i64)(unsigned)w1.w << 32) | (unsigned)w1.z;
    r.ext_b = ((i64)(unsigned)w2.y << 32) | (unsigned)w2.x;
    r.arrival_ns = ((i64)(unsigned)w2.w << 32) | (unsigned)w2.z;
    return r;
}

// Wait until every lane of the warp has got here; what each lane wrote before is then ordered
// before what any lane does after. __syncwarp() alone is not enough: after a __noinline__
// callee in which the lanes diverged (run_task, run_item), lane 0 was seen to pass it while
// other lanes were still inside the callee, and signal a job task done before the task's
// writes were made (bench/results/gpu/NOTES.md, "the lost lanes"). A vote every lane must
// execute does wait.
__device__ __forceinline__ void warp_join() {
    __ballot_sync(0xffffffffu, 1);
    __syncwarp();
}

// bar.sync is .aligned: every lane of a warp must reach it together. Warp 0 often has lane 0
// alone spinning (on job_done, the pools, the GC queue) while the others wait, so converge
// first; a divergent arrival can release the barrier early.
__device__ __forceinline__ void named_barrier_updaters() {
    warp_join();
    asm volatile("bar.sync 1, %0;" :: "r"(N_UPDATERS * 32) : "memory");
}

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

__device__ __forceinline__ int cdiv(int a, int b) { return (a + b - 1) / b; }

// Exclusive prefix of `amount` over the warp, added to *ctr with one atomic per warp; every
// lane must call it. Returns the lane's first claimed unit.
template <typename T> __device__ T warp_claim(T* ctr, T amount, int lane) {
    T incl = amount;
    for (int d = 1; d < 32; d <<= 1) {
        T v = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += v;
    }
    T base = 0;
    if (lane == 31 && incl) base = atomicAdd(ctr, incl);
    base = __shfl_sync(0xffffffffu, base, 31);
    return base + incl - amount;
}

// The version of x's neighbour array that update tau reads (Property 1), -1 if none.
// Returns its entries' start and length through off/len.
__device__ __forceinline__ int find_version(const Ctx& C, int x, int tau, int& off, int& len) {
    int v = __ldcg(C.head + x);
    while (v >= 0) {
        Version ver = load_version(C.vers + v);
        if (CHECK && ver.x != x) check_fail(C, CHK_WALK_FOREIGN, tau, x, v);
        if (ver.ct_min <= tau) {
            if (CHECK && ver.dt_max < tau) check_fail(C, CHK_WALK_EXPIRED, tau, x, v);
            off = ver.slab * 32; len = ver.len;
            return v;
        }
        v = ver.prev;
    }
    off = 0; len = 0;
    return -1;
}

// First index in entries [off, off+len) whose neighbour is >= c (> c when `upper`).
__device__ __forceinline__ int lower_nbr(const Ctx& C, int off, int len, int c, bool upper = false) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        int v = __ldcg(&C.entries[off + mid].nbr);
        if (v < c || (upper && v == c)) lo = mid + 1; else hi = mid;
    }
    return lo;
}

// Is an entry with neighbour c and a label matching `want` visible to tau in entries
// [off, off+len)? Re-insertions within one batch leave several entries of one neighbour,
// each with its own lifetime.
__device__ __forceinline__ bool has_edge(const Ctx& C, int off, int len, int c, int tau, int want) {
    for (int k = lower_nbr(C, off, len, c); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != c) return false;
        if (e.ct <= tau && tau <= e.dt && (want == ANY || e.elab == want)) return true;
    }
    return false;
}

// The entry of neighbour y alive at tau (the last one with ct <= tau), as an index into
// entries, or -1: the entry a deletion at tau ends.
__device__ int find_at(const Ctx& C, int off, int len, int y, int tau) {
    int found = -1;
    for (int k = lower_nbr(C, off, len, y); k < len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y || e.ct > tau) break;
        found = off + k;
    }
    return found;
}

// Live entry of neighbour y in version v (dt == INF), or -1.
__device__ int find_live(const Ctx& C, int v, int y) {
    if (v < 0) return -1;
    Version ver = load_version(C.vers + v);
    int off = ver.slab * 32;
    for (int k = lower_nbr(C, off, ver.len, y); k < ver.len; ++k) {
        Entry e = load_entry(C.entries + off + k);
        if (e.nbr != y) return -1;
        if (e.dt == INF_TS) return off + k;
    }
    return -1;
}

__device__ __forceinline__ const int* plan_ptr(const Ctx& C, int slot, int p) {
    return C.plans + ((size_t)slot * PMAX + p) * PLAN_INTS;
}

// Can plan p's start edge map onto (a, b) with edge label elab? (labels and symmetry)
__device__ bool start_ok(const Ctx& C, const int* pl, int a, int b, int elab) {
    int la = __ldcg(pl + PL_VLABEL), lb = __ldcg(pl + PL_VLABEL + 1), le = __ldcg(pl + PL_ELAB);
    if (la != ANY && __ldcg(C.vlab + a) != la) return false;
    if (lb != ANY && __ldcg(C.vlab + b) != lb) return false;
    if (le != ANY && elab != le) return false;
    int lt = __ldcg(pl + PL_SYMLT + 1), gt = __ldcg(pl + PL_SYMGT + 1);
    if ((lt | gt) & 1) {
        i64 ea = __ldcg(C.ext + a), eb = __ldcg(C.ext + b);
        if ((lt & 1) && !(eb < ea)) return false;
        if ((gt & 1) && !(eb > ea)) return false;
    }
    return true;
}

// Which backward neighbour's list level i scans: the first shortest. The updater (to cut
// level-2 chunks) and the executors (to run items) both use it, so they agree on what an
// item's positions index.
__device__ __forceinline__ int pick_base(const int* pl, int i, const int* mlen) {
    int nb = __ldcg(pl + PL_BNCNT + i);
    int best = 0, bl = 0x7fffffff;
    for (int k = 0; k < nb; ++k) {
        int l = mlen[__ldcg(pl + PL_BNPOS + i * KMAX + k)];
        if (l < bl) { bl = l; best = k; }
    }
    return best;
}

// ---------------------------------------------------------------------------------------
// Block view: one warp per block at a time refreshes it from global memory (at most every
// VIEW_NS), so thousands of waiting warps do not all poll the same few L2 lines.

#define VIEW_NS 1000
#define MASK40 ((1ULL << 40) - 1)

struct BlockView { u64 last_ns; int job_active; int hungry; int stop; int pad; };

__device__ void refresh_view(const Ctx& C, volatile BlockView& V, bool force = false) {
    u64 now = gtime();
    if (!force && now - V.last_ns < VIEW_NS) return;
    V.last_ns = now;
    u64 w = vload(&C.st->job_word), c = vload(&C.st->job_cursor);
    V.job_active = (c >> 40) == (w >> 40) && (c & MASK40) < (w & 0xffffffffULL);
    V.hungry = vload(&C.st->item_ticket) > vload(&C.st->item_reserve);
    V.stop = vload(&C.st->stop) != 0;
}

// ---------------------------------------------------------------------------------------
// Output: records [stamp, tau, slot, v0..v(n-1)] in the host ring, reserved warp-wide.

__device__ __forceinline__ int out_stamp(u64 pos) { return (int)(pos % 0x7fffffffULL) + 1; }

__device__ u64 reserve_out(const Ctx& C, u64 words) {
    u64 base = atomicAdd(&C.st->out_reserve, words);
    // Backpressure: wait until the host has consumed enough of the ring.
    while (base + words - vload(&C.st->out_consumed) > C.out_cap) __nanosleep(2000);
    return base;
}

__device__ void finalize_update(const Ctx& C, int tau, int lane);
__device__ void help(const Ctx& C, int lane, bool updater);

// ---------------------------------------------------------------------------------------
// Executor

struct Level {
    int off, len;     // entries scanned at this level
    int pos, end;     // current window start, end of the scan
    unsigned mask;    // candidates of the current window not yet taken
    int best;         // which backward neighbour's list is scanned
};

// Evaluate the window starting at lv.pos of level i: bit l set when entry pos+l is a valid
// candidate for step i.
__device__ unsigned eval_window(const Ctx& C, const int* pl, int i, const Level& lv, const int* m,
                                const int* moff, const int* mlen, int tau, int lane) {
    int t = lv.pos + lane;
    bool ok = t < lv.end;
    int c = -1;
    if (ok) {
        Entry e = load_entry(C.entries + lv.off + t);
        c = e.nbr;
        int nb = __ldcg(pl + PL_BNCNT + i);
        int want_base = __ldcg(pl + PL_BNELAB + i * KMAX + lv.best);
        ok = e.ct <= tau && tau <= e.dt && (want_base == ANY || e.elab == want_base);
        int vl = __ldcg(pl + PL_VLABEL + i);
        if (ok && vl != ANY && __ldcg(C.vlab + c) != vl) ok = false;
        for (int j = 0; ok && j < i; ++j) if (m[j] == c) ok = false;
        int lt = __ldcg(pl + PL_SYMLT + i), gt = __ldcg(pl + PL_SYMGT + i);
        if (ok && (lt | gt)) {
            i64 ec = __ldcg(C.ext + c);
            for (int j = 0; ok && j < i; ++j) {
                if (((lt >> j) & 1) && !(ec < __ldcg(C.ext + m[j]))) ok = false;
                if (((gt >> j) & 1) && !(ec > __ldcg(C.ext + m[j]))) ok = false;
            }
        }
        for (int k = 0; ok && k < nb; ++k) {
            if (k == lv.best) continue;
            int j = __ldcg(pl + PL_BNPOS + i * KMAX + k);
            ok = has_edge(C, moff[j], mlen[j], c, tau, __ldcg(pl + PL_BNELAB + i * KMAX + k));
        }
    }
    return __ballot_sync(0xffffffffu, ok);
}

// Write one match per set bit of `mask` (the candidates of the last level) to the ring.
__device__ void emit_window(const Ctx& C, const int* pl, int n, int slot, int tau, const Level& lv,
                            int* m, unsigned mask, int lane) {
    int cnt = __popc(mask);
    int rec = 3 + n;
    u64 base = 0;
    if (lane == 0) base = reserve_out(C, (u64)(cnt * rec));
    base = __shfl_sync(0xffffffffu, base, 0);
    if ((mask >> lane) & 1) {
        u64 at = base + (u64)__popc(mask & lanemask_lt()) * rec;
        int c = __ldcg(&C.entries[lv.off + lv.pos + lane].nbr);
        m[n - 1] = c;
        C.out[(at + 1) % C.out_cap] = tau;
        C.out[(at + 2) % C.out_cap] = slot;
        for (int x = 0; x < n; ++x) C.out[(at + 3 + x) % C.out_cap] = m[__ldcg(pl + PL_POS + x)];
        __threadfence_system();
        vstore(&C.out[at % C.out_cap], out_stamp(at));
    }
    warp_join();
}

// Reserve an item slot (lane 0): wait until its previous occupant has been read.
__device__ __forceinline__ u64 reserve_item_slot(const Ctx& C, u64 idx) {
    while (vload(&C.item_free[idx % MAXI]) < (i64)idx) __nanosleep(200);
    return idx;
}

// Write item `it` (the calling lanes' words ITEM_INTS at once) and stamp it (one lane).
__device__ __forceinline__ void write_item(const Ctx& C, u64 idx, const Item& it) {
    Item* dst = C.items + idx % MAXI;
    const int4* s = reinterpret_cast<const int4*>(&it);
    int4* d = reinterpret_cast<int4*>(dst);
#pragma unroll
    for (int k = 0; k < ITEM_INTS / 4; ++k) d[k] = s[k];
    __threadfence();
    vstore(&C.item_stamp[idx % MAXI], (i64)idx);
}

// Hand positions [pos, end) of level j (with prefix m[0..j-1]) to another warp.
__device__ void donate(const Ctx& C, int tau, int slot_plan, int j, int pos, int end, const int* m,
                       int lane) {
    if (lane == 0) {
        atomicAdd(&C.upd[tau % MAXU].pending, 1);  // before the item can run and finish
        __threadfence();
        u64 idx = reserve_item_slot(C, atomicAdd(&C.st->item_reserve, 1ULL));
        Item it;
        it.tau = tau; it.slot_plan = slot_plan; it.level = j; it.pos = pos; it.end = end; it.pad = 0;
        for (int k = 0; k < KMAX - 2; ++k) it.pre[k] = k + 2 < j ? m[k + 2] : -1;
        write_item(C, idx, it);
        atomicAdd(&C.st->donated, 1ULL);
    }
    warp_join();
}

#ifndef DONATE_EVERY
#define DONATE_EVERY 16
#endif

// Enumerate the matches of one work item; returns the number found.
__device__ __noinline__ u64 run_item(const Ctx& C, const Item& it, volatile BlockView& V, int lane) {
    int tau = it.tau;
    int slot = it.slot_plan >> 16, p = it.slot_plan & 0xffff;
    const Upd* u = C.upd + (tau % MAXU);
    const int* pl = plan_ptr(C, slot, p);
    int n = __ldcg(pl + PL_N);
    bool emit = vload(&C.st->q_count[slot]) == 0;
    int m[KMAX], moff[KMAX], mlen[KMAX];
    m[0] = __ldcg(&u->a); m[1] = __ldcg(&u->b);
    int s = it.level;
    for (int j = 2; j < s; ++j) m[j] = it.pre[j - 2];
    for (int j = 0; j < s; ++j) find_version(C, m[j], tau, moff[j], mlen[j]);
    if (n == 2) {
        if (emit) {
            // A two-vertex pattern: the match is the edge itself.
            if (lane == 0) {
                u64 base = reserve_out(C, 5);
                C.out[(base + 1) % C.out_cap] = tau;
                C.out[(base + 2) % C.out_cap] = slot;
                C.out[(base + 3 + __ldcg(pl + PL_POS + 0)) % C.out_cap] = m[0];
                C.out[(base + 3 + __ldcg(pl + PL_POS + 1)) % C.out_cap] = m[1];
                __threadfence_system();
                vstore(&C.out[base % C.out_cap], out_stamp(base));
            }
            warp_join();
        }
        return 1;
    }
    Level L[KMAX];
    u64 total = 0;
    int i = s;
    {
        Level& lv = L[s];
        lv.best = pick_base(pl, s, mlen);
        int jb = __ldcg(pl + PL_BNPOS + s * KMAX + lv.best);
        lv.off = moff[jb]; lv.len = mlen[jb];
        lv.pos = it.pos;
        lv.end = it.end < 0 ? min(lv.len, it.pos + CHUNK) : min(lv.len, it.end);
        lv.mask = lv.pos < lv.end ? eval_window(C, pl, s, lv, m, moff, mlen, tau, lane) : 0u;
    }
    int steps = 0;
    while (i >= s) {
        Level& lv = L[i];
        if (lv.mask == 0) {
            lv.pos += 32;
            if (lv.pos >= lv.end) { --i; continue; }
            if (++steps % DONATE_EVERY == 0) {
                // Give the untouched rest of the shallowest level with some left to a
                // waiting warp.
                int hungry = 0;
                if (lane == 0) { refresh_view(C, V); hungry = V.hungry; }
                if (__shfl_sync(0xffffffffu, hungry, 0)) {
                    for (int j = s; j <= i; ++j) {
                        int from = L[j].pos + 32;  // windows not yet evaluated
                        if (L[j].end - from >= (j == n - 1 ? 64 : 1)) {
                            donate(C, tau, it.slot_plan, j, from, L[j].end, m, lane);
                            L[j].end = from;
                            break;
                        }
                    }
                }
            }
            lv.mask = eval_window(C, pl, i, lv, m, moff, mlen, tau, lane);
            continue;
        }
        if (i == n - 1) {
            total += __popc(lv.mask);
            if (emit) emit_window(C, pl, n, slot, tau, lv, m, lv.mask, lane);
            lv.mask = 0;
            continue;
        }
        int j = __ffs(lv.mask) - 1;
        lv.mask &= lv.mask - 1;
        m[i] = __ldcg(&C.entries[lv.off + lv.pos + j].nbr);
        find_version(C, m[i], tau, moff[i], mlen[i]);
        ++i;
        // Scan the shortest backward-neighbour list of the new level.
        Level& nx = L[i];
        nx.best = pick_base(pl, i, mlen);
        int jb = __ldcg(pl + PL_BNPOS + i * KMAX + nx.best);
        nx.off = moff[jb]; nx.len = mlen[jb];
        nx.pos = 0; nx.end = nx.len;
        nx.mask = nx.end > 0 ? eval_window(C, pl, i, nx, m, moff, mlen, tau, lane) : 0u;
    }
    if (CHECK && lane == 0) {
        // The versions the item started from must still be the ones tau reads.
        for (int j = 0; j < s; ++j) {
            int off, len;
            find_version(C, m[j], tau, off, len);
            if (off != moff[j] || len != mlen[j]) check_fail(C, CHK_MOVED, tau, m[j], j);
        }
    }
    return total;
}

__device__ void executor(const Ctx& C, volatile BlockView& V, int lane) {
    while (true) {
        u64 idx = 0;
        if (lane == 0) idx = atomicAdd(&C.st->item_ticket, 1ULL);
        idx = __shfl_sync(0xffffffffu, idx, 0);
        // Wait for this ticket's item (its own stamp: device memory only, rule 1), helping
        // with the updater's job meanwhile.
        unsigned ns = 64;
        while (true) {
            int what = 0;  // 1: item ready, 2: stop, 3: help
            if (lane == 0) {
                if (vload(&C.item_stamp[idx % MAXI]) == (i64)idx) what = 1;
                else {
                    refresh_view(C, V);
                    what = V.stop ? 2 : V.job_active ? 3 : 0;
                }
            }
            what = __shfl_sync(0xffffffffu, what, 0);
            if (what == 1) { __threadfence(); break; }  // every lane acquires the item
            if (what == 2) return;
            if (what == 3) {
                help(C, lane, false);
                if (lane == 0) V.job_active = 0;
                ns = 64;
                continue;
            }
            __nanosleep(ns);
            if (ns < 1024) ns <<= 1;
        }
        Item it;
        {
            const int4* src = reinterpret_cast<const int4*>(C.items + (idx % MAXI));
            int4* dst = reinterpret_cast<int4*>(&it);
#pragma unroll
            for (int k = 0; k < ITEM_INTS / 4; ++k) dst[k] = __ldcg(src + k);
        }
        warp_join();
        if (lane == 0) vstore(&C.item_free[idx % MAXI], (i64)(idx + MAXI));
        int tau = it.tau;
        Upd* u = C.upd + (tau % MAXU);
        if (lane == 0 && __ldcg((const unsigned long long*)&u->t_start) == 0ULL)
            atomicCAS((unsigned long long*)&u->t_start, 0ULL, (unsigned long long)gtime());
        u64 found = run_item(C, it, V, lane);
        if (lane == 0 && found)
            atomicAdd(&C.upd_count[(size_t)(tau % MAXU) * QMAX + (it.slot_plan >> 16)], found);
        __threadfence_system();
        warp_join();  // no lane still reads the update's versions once it may complete
        int last = 0;
        if (lane == 0) last = atomicSub(&u->pending, 1) == 1;
        last = __shfl_sync(0xffffffffu, last, 0);
        if (last) {
            __threadfence();
            finalize_update(C, tau, lane);
        }
    }
}

// Completion of update tau: counts and times to the host, then the stamp; then the device
// flag the collector and slot reuse wait for.
__device__ void finalize_update(const Ctx& C, int tau, int lane) {
    size_t slot = tau % MAXU;
    Upd* u = C.upd + slot;
    if (lane < QMAX) {
        u64 c = __ldcg(C.upd_count + slot * QMAX + lane);
        C.done_counts[slot * QMAX + lane] = c;
    }
    warp_join();
    if (lane == 0) {
        Done* d = C.done + slot;
        d->outcome = __ldcg(&u->outcome);
        d->nitems = 0;
        d->t_taken = __ldcg((const unsigned long long*)&u->t_taken);
        u64 ts = __ldcg((const unsigned long long*)&u->t_start);
        d->t_finish = gtime();
        d->t_start = ts ? ts : d->t_finish;
        __threadfence_system();
        vstore(&d->tau, (i64)tau);
        vstore(&u->done, (i64)tau);
        atomicAdd(&C.st->completed, 1ULL);
    }
    warp_join();
}

// Completion of an update with no work item (one thread): zero counts, times, stamp.
__device__ void finalize_empty(const Ctx& C, int tau) {
    size_t slot = tau % MAXU;
    for (int q = 0; q < QMAX; ++q) C.done_counts[slot * QMAX + q] = 0;
    Done* d = C.done + slot;
    d->outcome = __ldcg(&C.upd[slot].outcome);
    d->nitems = 0;
    d->t_taken = __ldcg((const unsigned long long*)&C.upd[slot].t_taken);
    d->t_start = d->t_finish = gtime();
    __threadfence_system();
    vstore(&d->tau, (i64)tau);
    vstore(&C.upd[slot].done, (i64)tau);
    atomicAdd(&C.st->completed, 1ULL);
}

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
            ds->pad[0] = t - h;  // versions still waiting in the GC queue
            ds->pad[1] = vload(&C.st->donated);
        }
        warp_join();
        int stop = __shfl_sync(0xffffffffu, (int)vload(&C.st->stop), 0);
        if (stop) return;
        __nanosleep(2000);
    }
}

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
};

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
        // Read up to 32 records at once, one per lane (host reads are ~1 us each).
        while (head < tail && nb < BATCH_CAP && !stop && !blocked) {
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

// Job kinds, in the order the updater runs them for a batch.
enum JobKind {
    J_HALVES = 1,   // per record: labels, half edges, segments (vertex claims)
    J_SEGCOUNT,     // per half edge: its segment, arrival rank in it
    J_SEGSTART,     // per segment: where its half edges go
    J_PLACE,        // per half edge: into its segment
    J_ORDER,        // per half edge: update order within the segment
    J_CLASSIFY,     // per record: outcome (per endpoint pair, in order, from the graph)
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

#define COPY_UNROLL 4

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

__device__ void task_copy_chunks(const Ctx& C, const Batch& B, int t, int lane) {
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
        if (valid[u]) e[u] = load_entry(C.entries + ld(B.seg_off[g[u]]) + j[u]);
    }
#pragma unroll
    for (int u = 0; u < COPY_UNROLL; ++u) {
        if (!valid[u] || e[u].dt != INF_TS) continue;
        int pos = live_before(C, B, g[u], j[u]) + ins_below(B, g[u], e[u].nbr);
        *reinterpret_cast<int4*>(C.entries + ld(B.seg_noff[g[u]]) + pos) =
            make_int4(e[u].nbr, e[u].elab, e[u].ct, e[u].dt);
    }
}

// Level-2 chunks (work items) of an update (a, b, elab) at tau for one (slot, plan) pair: 0
// when the slot does not see tau or the start edge does not fit the plan. mlen: the
// version lengths of a and b at tau.
__device__ int chunks_of(const Ctx& C, int qp, int tau, int a, int b, int elab, const int* mlen) {
    int q = qp >> 16;
    if (!(ld(C.st->q_from[q]) <= tau && tau < ld(C.st->q_until[q]))) return 0;
    const int* pl = plan_ptr(C, q, qp & 0xffff);
    if (!start_ok(C, pl, a, b, elab)) return 0;
    if (__ldcg(pl + PL_N) == 2) return 1;
    int len = mlen[__ldcg(pl + PL_BNPOS + 2 * KMAX + pick_base(pl, 2, mlen))];
    return max(1, (len + CHUNK - 1) / CHUNK);
}

// Work items of applied update e (tau); records the version lengths of its endpoints.
__device__ int count_items(const Ctx& C, Batch& B, int e, int tau) {
    int a = ld(B.rec[e].a), b = ld(B.rec[e].b), elab = ld(B.elab[e]);
    int off, mlen[2];
    find_version(C, a, tau, off, mlen[0]);
    find_version(C, b, tau, off, mlen[1]);
    B.len_a[e] = mlen[0];
    B.len_b[e] = mlen[1];
    int nqp = ld(B.ctl.nqp), items = 0;
    for (int k = 0; k < nqp; ++k) items += chunks_of(C, ld(B.qp[k]), tau, a, b, elab, mlen);
    B.nitems[e] = items;
    return items;
}

// Run task t of job `kind` (whole warp).
__device__ __noinline__ void run_task(const Ctx& C, int kind, int t, int lane) {
    Batch& B = *C.batch;
    const int nb = ld(B.ctl.nb), tau0 = ld(B.ctl.tau0);
    const int e = t * 32 + lane;  // element of an element job
    switch (kind) {
    case J_HALVES: {
        if (e >= nb) break;
        InRec r = load_rec(B.rec + e);
        C.vlab[r.a] = r.a_label;  // first-seen labels were fixed by the host
        C.vlab[r.b] = r.b_label;
        C.ext[r.a] = r.ext_a;
        C.ext[r.b] = r.ext_b;
        B.nitems[e] = 0;
        size_t slot = (size_t)((tau0 + e) % MAXU) * QMAX;
        for (int q = 0; q < QMAX; ++q) C.upd_count[slot + q] = 0;
        int bno = (int)vload(&C.st->batch_no);
        for (int side = 0; side < 2; ++side) {
            int x = side ? r.b : r.a;
            B.hkey[2 * e + side] = ((u64)x << 32) | ((u64)e << 1) | (u64)side;
            if (atomicMax(&C.vmark[x], bno) < bno) {  // first half edge of x in this batch
                int g = atomicAdd(&B.ctl.nseg, 1);
                C.vseg[x] = g;
                B.seg_x[g] = x;
                B.seg_cnt[g] = 0;
            }
        }
        break;
    }
    case J_SEGCOUNT: {
        if (e >= 2 * nb) break;
        int g = ld(C.vseg[half_x(ld(B.hkey[e]))]);
        if (CHECK && (g >= ld(B.ctl.nseg) || ld(B.seg_x[g]) != half_x(ld(B.hkey[e]))))
            check_fail(C, CHK_SEGMENT, tau0 + e / 2, half_x(ld(B.hkey[e])), g);
        B.hseg[e] = g;
        B.hrank[e] = atomicAdd(&B.seg_cnt[g], 1);
        break;
    }
    case J_SEGSTART: {
        int ns = ld(B.ctl.nseg);
        int cnt = e < ns ? ld(B.seg_cnt[e]) : 0;
        int base = warp_claim(&B.ctl.hcur, cnt, lane);
        if (e < ns) B.seg_h0[e] = base;
        break;
    }
    case J_PLACE: {
        if (e >= 2 * nb) break;
        int at = ld(B.seg_h0[ld(B.hseg[e])]) + ld(B.hrank[e]);
        u64 key = ld(B.hkey[e]);
        B.tmp[at] = key;
        B.tmp_y[at] = half_y(B, key);
        break;
    }
    case J_ORDER: {
        if (e >= 2 * nb) break;
        int g = ld(B.hseg[e]);
        int h0 = ld(B.seg_h0[g]), cnt = ld(B.seg_cnt[g]);
        u64 key = ld(B.hkey[e]);
        int y = half_y(B, key), i = half_i(key);
        int r = 0, rp = 0;  // ranks by update index, and by (other endpoint, update index)
        for (int k = h0; k < h0 + cnt; ++k) {
            u64 o = ld(B.tmp[k]);
            int yo = ld(B.tmp_y[k]);
            r += o < key;
            rp += yo < y || (yo == y && half_i(o) < i);
        }
        B.half[h0 + r] = key;
        B.hsorted[e] = h0 + r;
        B.hpair[h0 + rp] = key;
        B.hpair_y[h0 + rp] = y;
        B.hpair_pos[e] = h0 + rp;
        break;
    }
    case J_CLASSIFY: {
        // Outcome of update e: replay its endpoint pair's updates in this batch, in order,
        // from the pair's state in the graph (insert of a present edge / delete of an
        // absent one is a no-op). They sit next to each other in the (other endpoint,
        // update) order of the smaller endpoint's segment. Each lane writes its own update.
        if (e >= nb) break;
        int a = ld(B.rec[e].a), b = ld(B.rec[e].b);
        int lo = min(a, b), hi = max(a, b);
        int h = 2 * e + (a == lo ? 0 : 1);
        int p = ld(B.hpair_pos[h]), q = p, h0 = ld(B.seg_h0[ld(B.hseg[h])]);
        while (q > h0 && ld(B.hpair_y[q - 1]) == hi) --q;
        const int chain = p - q + 1;
        int ent = find_live(C, __ldcg(C.head + lo), hi);
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
        const int outcome = mine ? OUT_APPLIED : OUT_NOOP;
        B.outcome[e] = outcome;
        B.elab[e] = lab;
        if (CHECK) B.outcome_shadow[e] = ((int)vload(&C.st->batch_no) << 4) | outcome;
        break;
    }
    case J_SEGINFO: {
        int ns = ld(B.ctl.nseg);
        bool on = e < ns;
        int first_ins = -1, nins = 0, ndel = 0, oldlen = 0, dead = 0, off = 0, cur = -1, cls = -1;
        if (on) {
            int x = ld(B.seg_x[e]);
            int h0 = ld(B.seg_h0[e]), h1 = h0 + ld(B.seg_cnt[e]);
            cur = __ldcg(C.head + x);
            for (int q = h0; q < h1; ++q) {
                int i = half_i(ld(B.half[q]));
                if (!applied(C, B, i, J_SEGINFO)) continue;
                if (is_insert(B, i)) { if (first_ins < 0) first_ins = q; ++nins; }
                else if (first_ins < 0) ++ndel;
            }
            if (cur >= 0) {
                Version ver = load_version(C.vers + cur);
                if (CHECK && ver.x != x) check_fail(C, CHK_WRONG_VERTEX, tau0, x, cur);
                for (int k = 1; CHECK && k < ver.len; ++k) {
                    Entry p = load_entry(C.entries + ver.slab * 32 + k - 1);
                    Entry q = load_entry(C.entries + ver.slab * 32 + k);
                    if (p.nbr > q.nbr || (p.nbr == q.nbr && (p.ct > q.ct || (p.dt == INF_TS && q.dt == INF_TS)))) {
                        check_fail(C, CHK_UNSORTED, cur, x, k);
                        break;
                    }
                }
                oldlen = ver.len; off = ver.slab * 32;
                dead = ver.ndead + ndel;
                // Dead-entry count (the in-place deletions of J_SEGEDIT count here).
                if (ndel) C.vers[cur].ndead = dead;
            }
            cls = first_ins >= 0 ? ceil_log2((unsigned)((oldlen + nins + 31) / 32)) : -1;
            B.seg_cur[e] = cur;
            B.seg_first_ins[e] = first_ins;
            B.seg_nins[e] = nins;
            B.seg_oldlen[e] = oldlen;
            B.seg_dead[e] = dead;
            B.seg_off[e] = off;
            B.seg_cls[e] = cls;
            B.seg_new[e] = -1;
        }
        bool fresh = cls >= 0;
        int vr = warp_claim(&B.ctl.nver, (int)fresh, lane);
        int ch = warp_claim(&B.ctl.nchunks, fresh ? (oldlen + 31) / 32 : 0, lane);
        int i0 = warp_claim(&B.ctl.nins, fresh ? nins : 0, lane);
        warp_claim(&B.ctl.npush, (int)(fresh && cur >= 0), lane);
        warp_claim(&B.ctl.ncompact, (int)(fresh && dead > 0), lane);
        if (fresh) {
            B.seg_vrank[e] = vr;
            B.seg_chunk0[e] = ch;
            B.seg_ins0[e] = i0;
            // Rank among the batch's new versions of the same size class.
            unsigned peers = __match_any_sync(__activemask(), cls);
            int leader = __ffs(peers) - 1, base = 0;
            if (lane == leader) base = atomicAdd(&B.ctl.class_cnt[cls], __popc(peers));
            base = __shfl_sync(peers, base, leader);
            B.seg_crank[e] = base + __popc(peers & lanemask_lt());
        }
        break;
    }
    case J_SEGEDIT: {
        if (e >= 2 * nb) break;
        u64 key = ld(B.half[e]);
        int i = half_i(key);
        if (!applied(C, B, i, J_SEGEDIT)) break;
        int g = ld(C.vseg[half_x(key)]);
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
                // Deleted before the batch's first insertion into this array: edit in place.
                int ent = find_live(C, ld(B.seg_cur[g]), y);
                if (ent >= 0) C.entries[ent].dt = tau0 + i;
                else if (CHECK) check_fail(C, CHK_DELETE_MISSING, tau0 + i, half_x(key), y);
            }
            break;
        }
        int h1 = ld(B.seg_h0[g]) + ld(B.seg_cnt[g]), r = 0;
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
        break;
    }
    case J_ALLOC: {
        if (e >= ld(B.ctl.nseg)) break;
        int cls = ld(B.seg_cls[e]);
        if (cls < 0) break;
        int r = ld(B.seg_crank[e]), rn = ld(B.ctl.ring_n[cls]);
        int slab = r < rn
            ? ld(C.slab_free[class_base(C, cls) + (ld(B.ctl.ring_h[cls]) + r) % (C.nslabs >> cls)])
            : (int)(ld(B.ctl.bump0[cls]) + (u64)(r - rn) * (1ULL << cls));
        int vr = ld(B.seg_vrank[e]), vn = ld(B.ctl.ver_ring_n);
        int v = vr < vn ? ld(C.ver_free[(ld(B.ctl.ver_ring_h) + vr) % C.maxver])
                        : (int)(ld(B.ctl.ver_bump0) + vr - vn);
        int cur = ld(B.seg_cur[e]);
        int first_tau = tau0 + half_i(ld(B.half[ld(B.seg_first_ins[e])]));
        int x = ld(B.seg_x[e]);
        if (CHECK) {
            int owner = atomicExch(&C.slab_owner[slab], v);
            if (owner != -1) check_fail(C, CHK_SLAB_TWICE, slab, owner, v);
            Version pv = load_version(C.vers + v);
            if (vr < vn && (pv.dt_max == INF_TS || __ldcg(C.head + pv.x) == v))
                check_fail(C, CHK_VERSION_LIVE, v, pv.x, pv.dt_max);
        }
        if (CHECK) {
            int n = ld(B.seg_oldlen[e]) + ld(B.seg_nins[e]);
            for (int k = 0; k < n; ++k)
                *reinterpret_cast<int4*>(C.entries + slab * 32 + k) =
                    make_int4(CHECK_SENTINEL, 0, 0, 0);
        }
        int4* nv = reinterpret_cast<int4*>(C.vers + v);
        nv[0] = make_int4(slab, 0, cls, first_tau);
        nv[1] = make_int4(INF_TS, cur, 0, x);
        if (cur >= 0) C.vers[cur].dt_max = first_tau - 1;
        B.seg_new[e] = v;
        B.seg_noff[e] = slab * 32;
        int c0 = ld(B.seg_chunk0[e]), nch = (ld(B.seg_oldlen[e]) + 31) / 32;
        for (int k = 0; k < nch; ++k) C.chunkseg[c0 + k] = e;
        break;
    }
    case J_MASK: {
        int g = ld(C.chunkseg[t]);
        if (ld(B.seg_dead[g]) == 0) break;
        int j = (t - ld(B.seg_chunk0[g])) * 32 + lane;
        bool live = j < ld(B.seg_oldlen[g]) &&
                    __ldcg(&C.entries[ld(B.seg_off[g]) + j].dt) == INF_TS;
        unsigned mask = __ballot_sync(0xffffffffu, live);
        if (lane == 0) C.chunkmask[t] = mask;
        break;
    }
    case J_SCAN: {
        int ns = ld(B.ctl.nseg);
        bool mine = e < ns && ld(B.seg_cls[e]) >= 0;
        int oldlen = mine ? ld(B.seg_oldlen[e]) : 0;
        bool dead = mine && ld(B.seg_dead[e]) > 0;
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
            C.vers[ld(B.seg_new[e])].len = live + ld(B.seg_nins[e]);
        }
        break;
    }
    case J_COPY: {
        int nct = cdiv(ld(B.ctl.nchunks), COPY_UNROLL);
        if (t < nct) { task_copy_chunks(C, B, t, lane); break; }
        // Inserted entries: after live old entries of the same neighbour, among themselves
        // by tau.
        int k = (t - nct) * 32 + lane;
        if (k >= ld(B.ctl.nins)) break;
        int g = ld(B.ins_seg[k]), y = ld(B.ins_y[k]), i = ld(B.ins_i[k]);
        int above = lower_nbr(C, ld(B.seg_off[g]), ld(B.seg_oldlen[g]), y, true);
        int pos = (k - ld(B.seg_ins0[g])) + live_before(C, B, g, above);
        *reinterpret_cast<int4*>(C.entries + ld(B.seg_noff[g]) + pos) =
            make_int4(y, ld(B.rec[i].label), tau0 + i, INF_TS);
        break;
    }
    case J_PUBLISH: {
        int nht = cdiv(2 * nb, 32);
        if (t < nht) {
            // Deletions after the first insertion end the entry alive at their tau in the
            // new version.
            if (e >= 2 * nb) break;
            u64 key = ld(B.half[e]);
            int i = half_i(key);
            if (!applied(C, B, i, J_PUBLISH) || is_insert(B, i)) break;
            int g = ld(C.vseg[half_x(key)]);
            int first_ins = ld(B.seg_first_ins[g]);
            if (first_ins < 0 || e < first_ins) break;
            int v = ld(B.seg_new[g]);
            int ent = find_at(C, ld(B.seg_noff[g]), ld(C.vers[v].len), half_y(B, key), tau0 + i);
            if (CHECK) {
                int len = ld(C.vers[v].len);
                if (len != ld(B.seg_live[g]) + ld(B.seg_nins[g]))
                    check_fail(C, CHK_LEN, tau0 + i, half_x(key), len);
                int x = half_x(key), y = half_y(B, key);
                if (ent < 0) check_fail(C, CHK_DELETE_MISSING, tau0 + i, x, y);
                else if (ld(C.entries[ent].dt) != INF_TS)
                    check_fail(C, CHK_DELETE_DEAD, tau0 + i, x,
                               y + 1000LL * (ent - ld(B.seg_noff[g])));
            }
            if (ent >= 0) C.entries[ent].dt = tau0 + i;
            atomicAdd(&C.vers[v].ndead, 1);
            break;
        }
        // Publish the new versions and retire their predecessors into the GC queue.
        int g = (t - nht) * 32 + lane;
        bool on = g < ld(B.ctl.nseg);
        int v = on ? ld(B.seg_new[g]) : -1;
        int cur = v >= 0 ? ld(B.seg_cur[g]) : -1;
        if (v >= 0) vstore(C.head + ld(B.seg_x[g]), v);
        int at = warp_claim(&B.ctl.gcpos, (int)(cur >= 0), lane);
        if (cur >= 0) C.gcq[(ld(B.ctl.gcq_base) + at) % C.gcq_cap] = cur;
        break;
    }
    case J_COUNT: {
        int items = 0;
        if (e < nb && applied(C, B, e, J_COUNT)) items = count_items(C, B, e, tau0 + e);
        warp_claim(&B.ctl.nitems, items, lane);
        break;
    }
    case J_ITEMS: {
        bool on = e < nb;
        int tau = tau0 + e, items = on ? ld(B.nitems[e]) : 0;
        if (on) {
            Upd* u = C.upd + (tau % MAXU);
            InRec r = load_rec(B.rec + e);
            u->a = r.a; u->b = r.b; u->elab = ld(B.elab[e]); u->op = r.kind == REC_INSERT ? 1 : -1;
            u->outcome = ld(B.outcome[e]);
            u->pending = items;
            u->tau = tau;
            u->t_taken = ld(B.taken[e]);
            u->t_start = 0;
            __threadfence();
            if (items == 0) finalize_empty(C, tau);
        }
        u64 idx = warp_claim(&C.st->item_reserve, (u64)items, lane);
        if (items == 0) break;
        int a = ld(B.rec[e].a), b = ld(B.rec[e].b), elab = ld(B.elab[e]);
        int mlen[2] = {ld(B.len_a[e]), ld(B.len_b[e])};
        int nqp = ld(B.ctl.nqp);
        for (int k = 0; k < nqp; ++k) {
            int qp = ld(B.qp[k]);
            int nchunk = chunks_of(C, qp, tau, a, b, elab, mlen);
            for (int c = 0; c < nchunk; ++c, ++idx) {
                Item it;
                it.tau = tau; it.slot_plan = qp; it.level = 2; it.pos = c * CHUNK; it.end = -1;
                it.pad = 0;
                for (int x = 0; x < KMAX - 2; ++x) it.pre[x] = -1;
                write_item(C, reserve_item_slot(C, idx), it);
            }
        }
        break;
    }
    case J_VERIFY: {
        if (e >= ld(B.ctl.nseg) || ld(B.seg_new[e]) < 0) break;
        int v = ld(B.seg_new[e]), off = ld(B.seg_noff[e]), len = ld(C.vers[v].len);
        i64 x = ld(B.seg_x[e]);
        // Where: the batch's first tau, the vertex, and k + 1000 * old length + 1e6 * insertions.
        i64 shape = 1000LL * ld(B.seg_oldlen[e]) + 1000000LL * ld(B.seg_nins[e]);
        if (len != ld(B.seg_live[e]) + ld(B.seg_nins[e]))
            check_fail(C, CHK_LEN, tau0, x, len + shape);
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
        for (int k = 0; k < len; ++k) {
            Entry q = load_entry(C.entries + off + k);
            if (q.nbr == CHECK_SENTINEL) { check_fail(C, CHK_HOLE, tau0, x, k + shape); break; }
            if (k == 0) continue;
            Entry p = load_entry(C.entries + off + k - 1);
            int bad = p.nbr > q.nbr || (p.nbr == q.nbr && p.ct > q.ct) ? CHK_ORDER
                    : p.nbr == q.nbr && p.dt == INF_TS && q.dt == INF_TS ? CHK_TWO_LIVE : 0;
            if (bad) { check_fail(C, bad, tau0, x, k + shape); break; }
        }
        break;
    }
    }
}

// Job kinds executor warps help with (all; a bit mask so that a suspected race can be
// bisected by job, as bench/results/gpu/NOTES.md describes).
#ifndef HELP_MASK
#define HELP_MASK 0xffffffffu
#endif

// Claim and run tasks of the current job until none is left (whole warp).
__device__ __noinline__ void help(const Ctx& C, int lane, bool updater = false) {
    while (true) {
        u64 old = 0, w = 0;
        if (lane == 0) {
            u64 c = vload(&C.st->job_cursor);
            w = vload(&C.st->job_word);
            bool allowed = updater || ((HELP_MASK >> ((w >> 32) & 0xff)) & 1);
            if (allowed && (c >> 40) == (w >> 40) && (c & MASK40) < (w & 0xffffffffULL)) {
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
        run_task(C, (int)((w >> 32) & 0xff), (int)(old & MASK40), lane);
        __threadfence();
        warp_join();  // every lane's writes, not only lane 0's, before the task counts as done
        if (CHECK && lane == 0) {
            u64 t = old & MASK40, seq = w >> 40;
            if (atomicExch(&C.task_mark[t], seq) == seq)
                check_fail(C, CHK_TASK_TWICE, (w >> 32) & 0xff, t, seq);
            __threadfence();
        }
        if (lane == 0) atomicAdd(&C.st->job_done, 1ULL);
    }
}

// Post a job of n tasks, work on it, and return once every task has finished (all updater
// warps call it together).
__device__ void job(const Ctx& C, int kind, int n, int w, int lane) {
    if (n <= 0) return;
    __threadfence();
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
        vstore(&st->job_cursor, seq << 40);
    }
    named_barrier_updaters();
    help(C, lane, true);
    if (w == 0 && lane == 0) {
        while (vload(&C.st->job_done) < (u64)n) __nanosleep(64);
        __threadfence();
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
        if (!pop_units(C, k, &C.st->free_head[c], &C.st->free_tail[c], &C.st->slab_bump, C.nslabs,
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

__device__ void reset_batch_counters(Batch& B, int lane) {
    if (lane < NCLASS) B.ctl.class_cnt[lane] = 0;
    if (lane == 0) {
        BatchCtl& K = B.ctl;
        K.nseg = 0; K.hcur = 0; K.nchunks = 0; K.nins = 0; K.nver = 0; K.npush = 0;
        K.gcpos = 0; K.nqp = 0; K.ncompact = 0; K.nitems = 0;
    }
}

__device__ void updater(const Ctx& C, int w, int lane) {
    __shared__ UpdShared S;
    Batch& B = *C.batch;
    if (w == 0 && lane == 0) {
        S.fatal = 0;
        C.dstat->clock_ns = gtime();
        C.dstat->running = 1;
        __threadfence_system();
    }
    const bool clock = w == 0 && lane == 0;
    while (true) {
        if (w == 0) {
            reset_batch_counters(B, lane);
            form_batch(C, S, lane);
            if (lane == 0 && S.nb > 0) vstore(&C.st->batch_no, vload(&C.st->batch_no) + 1);
        }
        named_barrier_updaters();
        int nb = S.nb, stop = S.stop;
        if (nb > 0) {
            u64 t[5];
            t[0] = clock ? gtime() : 0;
            int nht = cdiv(2 * nb, 32);
            job(C, J_HALVES, cdiv(nb, 32), w, lane);
            job(C, J_SEGCOUNT, nht, w, lane);
            int nseg = vload(&B.ctl.nseg), nst = cdiv(nseg, 32);
            job(C, J_SEGSTART, nst, w, lane);
            job(C, J_PLACE, nht, w, lane);
            job(C, J_ORDER, nht, w, lane);
            job(C, J_CLASSIFY, cdiv(nb, 32), w, lane);
            job(C, J_SEGINFO, nst, w, lane);
            job(C, J_SEGEDIT, nht, w, lane);
            if (clock) S.fatal = !allocate(C);
            named_barrier_updaters();
            if (S.fatal) break;
            job(C, J_ALLOC, nst, w, lane);
            t[1] = clock ? gtime() : 0;
            int nchunks = vload(&B.ctl.nchunks);
            if (vload(&B.ctl.ncompact) > 0) job(C, J_MASK, nchunks, w, lane);
            job(C, J_SCAN, nst, w, lane);
            job(C, J_COPY, cdiv(nchunks, COPY_UNROLL) + cdiv(vload(&B.ctl.nins), 32), w, lane);
            t[2] = clock ? gtime() : 0;
            if (clock) {
                u64 tl = C.st->gcq_tail, np = (u64)vload(&B.ctl.npush);
                while (tl + np - vload(&C.st->gcq_head) > C.gcq_cap) { relay(C); __nanosleep(1000); }
                B.ctl.gcq_base = tl;
            }
            job(C, J_PUBLISH, nht + nst, w, lane);
            if (CHECK) job(C, J_VERIFY, nst, w, lane);
            if (clock) vstore(&C.st->gcq_tail, C.st->gcq_tail + (u64)vload(&B.ctl.npush));
            t[3] = clock ? gtime() : 0;
            if (w == 0) live_plans(C, S.tau0, nb, lane);
            job(C, J_COUNT, cdiv(nb, 32), w, lane);
            if (clock) {
                // Room in the item ring for the whole batch, so that no helper waits inside
                // J_ITEMS on a slot whose reader is itself helping.
                u64 end = vload(&C.st->item_reserve) + (u64)vload(&B.ctl.nitems);
                while (end > 0 && vload(&C.item_free[(end - 1) % MAXI]) < (i64)(end - 1)) __nanosleep(500);
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
            }
        }
        named_barrier_updaters();
        if (stop) break;
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

extern "C" __global__ void __launch_bounds__(256, 3) dcsm_persistent(const u64* ctx_words) {
    const Ctx& C = *reinterpret_cast<const Ctx*>(ctx_words);
    __shared__ BlockView V;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) { V.last_ns = 0; V.job_active = 0; V.hungry = 0; V.stop = 0; }
    __syncthreads();
    if (blockIdx.x == 0 && warp < N_UPDATERS) updater(C, warp, lane);
    else if (blockIdx.x == 0 && warp == N_UPDATERS) collector(C, lane);
    else executor(C, V, lane);
}
