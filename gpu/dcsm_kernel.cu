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
//     commands, relays the host's consumption counters into device memory. All updater
//     warps then apply the batch to the MVG (the multi-array copy is spread over all of
//     them, a "super-warp"), and warp 0 publishes work items for the executors.
//   * the garbage-collector warp N_UPDATERS of block 0: advances the GC pointer over
//     completed updates and returns retired versions to the pools.
//   * executor warps: everything else. Each takes a ticket (one atomicAdd, gpu-facts rule
//     4), waits on the read-only published counter, then enumerates the matches of one work
//     item: (update, query slot, plan, chunk of the first candidate list).
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
//   vlab   int32[maxv]         vertex labels; host allocates; updater w0 writes (from input
//                              records), executors read.
//   ext    int64[maxv]         external vertex ids (symmetry breaking compares them); as vlab.
//   head   int32[maxv]         newest version of each vertex's neighbour array, -1 if none;
//                              updater writes (after the version is complete), all read.
//   entries Entry[nslabs*32]   slab pool, 32 entries a slab, 16 B an entry {nbr, elab, ct,
//                              dt}; a version owns a run of 2^cls consecutive slabs, entries
//                              sorted by (nbr, ct). Updater writes new runs and in-place dt
//                              edits; executors read through L2 (__ldcg: L1 is not coherent).
//   vers   Version[maxver]     {slab, len, cls, ct_min, dt_max, prev, dead}; updater writes,
//                              executors and GC read.
//   slab_free int32[sum_c nslabs>>c]  per-class free rings of slab-run starts: GC pushes,
//                              updater w0 lane 0 pops (single producer, single consumer).
//   ver_free int32[maxver]     free ring of version ids (GC pushes, updater pops).
//   gcq    int32[gcq_cap]      retired versions in dt_max order (the GC graph's frontier):
//                              updater w0 appends, GC consumes.
//   upd    Upd[MAXU]           per-update record, slot tau % MAXU: updater writes, executors
//                              decrement `pending`, the finishing warp sets `done`.
//   upd_count u64[MAXU*QMAX]   match counts per (update, query slot): executors atomicAdd.
//   items  Item[MAXI]          work items ring: updater w0 writes, executors read;
//   item_free int64[MAXI]      item index the slot may next hold (executor frees it).
//   plans  int32[QMAX*PMAX*PLAN_INTS]  plan blobs (layout below): host uploads before the
//                              REGISTER command; executors and updater read.
//   chunkmask u32, chunkoff int32 [MAXCHUNK]  updater scratch of the multi-array copy
//                              (live masks and prefix offsets of 32-entry chunks).
//   UpdShared (shared memory of block 0): the batch, its segments, the query-slot table;
//                              warp 0 writes, all updater warps read after a named barrier.
//   st     State               counters (below); mixed writers as commented per field.
//   Host-mapped (pinned):
//   in_ring InRec[in_cap]      host writes records then hctl->in_tail; updater w0 reads.
//   hctl   HostCtl             host writes; updater w0 reads (relays into st).
//   dstat  DevStatus           device writes (w0: in_consumed; GC: pool stats); host reads.
//   out    int32[out_cap]      match records [stamp, tau, slot, v0..v(n-1)]; executors write
//                              the body, then the stamp; host reads in order.
//   done   Done[MAXU], done_counts u64[MAXU*QMAX]: per-update completion records; the
//                              finishing warp writes counts and times, then the stamp tau.

#ifndef N_UPDATERS
#define N_UPDATERS 4
#endif
#ifndef BATCH_MAX
#define BATCH_MAX 64
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
#define MAXI 1048576
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

#if QMAX > 32
#error "QMAX must be at most 32 (one lane per query slot in finalize_update)"
#endif

#define KMAX 16
#define INF_TS 0x7fffffff
#define ANY (-1)

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
// pad0 counts the version's dead entries (dt != INF): a copy of a version without any skips
// the compaction scan.
struct Version { int slab; int len; int cls; int ct_min; int dt_max; int prev; int pad0; int pad1; };

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

struct Item { int tau_lo; int tau_hi; int slot_plan; int chunk; };

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
    u64 items_published;  // w0 writes; executors read
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
    u64 hold_publish;     // host: fixed-batch baseline holds items until STOP
    u64 held_items;       // w0: items generated but not yet published (baseline)
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
};

// Every pointer and size the kernel needs; all fields 8 bytes so the host can fill it as
// a uint64 array (gpu/engine.py: CTX_FIELDS, same order).
struct Ctx {
    int* vlab; i64* ext; int* head; u64 maxv;
    Entry* entries; u64 nslabs;
    Version* vers; u64 maxver;
    int* slab_free; int* ver_free;
    int* gcq; u64 gcq_cap;
    Upd* upd; u64* upd_count;
    Item* items; i64* item_free;
    int* plans;
    unsigned* chunkmask; int* chunkoff;
    State* st;
    InRec* in_ring; u64 in_cap;
    HostCtl* hctl; DevStatus* dstat;
    int* out; u64 out_cap;
    Done* done; u64* done_counts;
};

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

__device__ __forceinline__ Entry load_entry(const Entry* e) {
    int4 v = __ldcg(reinterpret_cast<const int4*>(e));
    Entry r; r.nbr = v.x; r.elab = v.y; r.ct = v.z; r.dt = v.w;
    return r;
}

__device__ __forceinline__ Version load_version(const Version* v) {
    int4 a = __ldcg(reinterpret_cast<const int4*>(v));
    int4 b = __ldcg(reinterpret_cast<const int4*>(v) + 1);
    Version r; r.slab = a.x; r.len = a.y; r.cls = a.z; r.ct_min = a.w; r.dt_max = b.x; r.prev = b.y;
    r.pad0 = b.z; r.pad1 = b.w;
    return r;
}

__device__ __forceinline__ void named_barrier_updaters() {
    asm volatile("bar.sync 1, %0;" :: "r"(N_UPDATERS * 32) : "memory");
}

__device__ __forceinline__ unsigned lanemask_lt() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// The version of x's neighbour array that update tau reads (Property 1), -1 if none.
// Returns its entries' start and length through off/len.
__device__ __forceinline__ int find_version(const Ctx& C, int x, int tau, int& off, int& len) {
    int v = __ldcg(C.head + x);
    while (v >= 0) {
        Version ver = load_version(C.vers + v);
        if (ver.ct_min <= tau) { off = ver.slab * 32; len = ver.len; return v; }
        v = ver.prev;
    }
    off = 0; len = 0;
    return -1;
}

// Is an entry with neighbour c and a label matching `want` visible to tau in entries
// [off, off+len)? Binary search for the first entry >= c, then scan its duplicates
// (re-insertions within one batch leave several entries of one neighbour, each with its own
// lifetime).
__device__ __forceinline__ bool has_edge(const Ctx& C, int off, int len, int c, int tau, int want) {
    int lo = 0, hi = len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (__ldcg(&C.entries[off + mid].nbr) < c) lo = mid + 1; else hi = mid;
    }
    for (; lo < len; ++lo) {
        Entry e = load_entry(C.entries + off + lo);
        if (e.nbr != c) return false;
        if (e.ct <= tau && tau <= e.dt && (want == ANY || e.elab == want)) return true;
    }
    return false;
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

// Step 2's scan list: the backward neighbour of step 2 with the shortest version at tau.
// Both the updater (to cut work items) and the executor (to run them) call this, so they
// agree on which list the chunk numbers index.
__device__ __forceinline__ int base_of_step2(const Ctx& C, const int* pl, const int* m, int tau,
                                             int& off, int& len) {
    int nb = __ldcg(pl + PL_BNCNT + 2);
    int best = 0, bo = 0, bl = 0x7fffffff;
    for (int k = 0; k < nb; ++k) {
        int o, l;
        find_version(C, m[__ldcg(pl + PL_BNPOS + 2 * KMAX + k)], tau, o, l);
        if (l < bl) { bl = l; bo = o; best = k; }
    }
    off = bo; len = bl;
    return best;
}

// ---------------------------------------------------------------------------------------
// Output: records [stamp, tau, slot, v0..v(n-1)] in the host ring, reserved warp-wide.

__device__ __forceinline__ int out_stamp(u64 pos) { return (int)(pos % 0x7fffffffULL) + 1; }

__device__ void finalize_update(const Ctx& C, int tau, int lane);

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
    if (lane == 0) {
        base = atomicAdd(&C.st->out_reserve, (u64)(cnt * rec));
        // Backpressure: wait until the host has consumed enough of the ring.
        while (base + (u64)(cnt * rec) - vload(&C.st->out_consumed) > C.out_cap) __nanosleep(2000);
    }
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
    __syncwarp();
}

// Enumerate the matches of one work item; returns the number found.
__device__ u64 run_item(const Ctx& C, const Item& it, int lane) {
    int tau = it.tau_lo;
    int slot = it.slot_plan >> 16, p = it.slot_plan & 0xffff;
    const Upd* u = C.upd + (tau % MAXU);
    int a = __ldcg(&u->a), b = __ldcg(&u->b);
    const int* pl = plan_ptr(C, slot, p);
    int n = __ldcg(pl + PL_N);
    bool emit = vload(&C.st->q_count[slot]) == 0;
    int m[KMAX], moff[KMAX], mlen[KMAX];
    m[0] = a; m[1] = b;
    find_version(C, a, tau, moff[0], mlen[0]);
    find_version(C, b, tau, moff[1], mlen[1]);
    if (n == 2) {
        if (emit) {
            // A two-vertex pattern: the match is the edge itself.
            if (lane == 0) {
                u64 base = atomicAdd(&C.st->out_reserve, (u64)5);
                while (base + 5 - vload(&C.st->out_consumed) > C.out_cap) __nanosleep(2000);
                C.out[(base + 1) % C.out_cap] = tau;
                C.out[(base + 2) % C.out_cap] = slot;
                C.out[(base + 3 + __ldcg(pl + PL_POS + 0)) % C.out_cap] = a;
                C.out[(base + 3 + __ldcg(pl + PL_POS + 1)) % C.out_cap] = b;
                __threadfence_system();
                vstore(&C.out[base % C.out_cap], out_stamp(base));
            }
            __syncwarp();
        }
        return 1;
    }
    Level L[KMAX];
    u64 total = 0;
    int i = 2;
    {
        int off, len;
        L[2].best = base_of_step2(C, pl, m, tau, off, len);
        L[2].off = off; L[2].len = len;
        L[2].pos = it.chunk * CHUNK;
        L[2].end = min(len, (it.chunk + 1) * CHUNK);
        L[2].mask = L[2].pos < L[2].end ? eval_window(C, pl, 2, L[2], m, moff, mlen, tau, lane) : 0u;
    }
    while (i >= 2) {
        Level& lv = L[i];
        if (lv.mask == 0) {
            lv.pos += 32;
            if (lv.pos >= lv.end) { --i; continue; }
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
        int nb = __ldcg(pl + PL_BNCNT + i);
        nx.best = 0;
        int bl = 0x7fffffff;
        for (int k = 0; k < nb; ++k) {
            int jj = __ldcg(pl + PL_BNPOS + i * KMAX + k);
            if (mlen[jj] < bl) { bl = mlen[jj]; nx.best = k; }
        }
        int jb = __ldcg(pl + PL_BNPOS + i * KMAX + nx.best);
        nx.off = moff[jb]; nx.len = mlen[jb];
        nx.pos = 0; nx.end = nx.len;
        nx.mask = nx.end > 0 ? eval_window(C, pl, i, nx, m, moff, mlen, tau, lane) : 0u;
    }
    return total;
}

__device__ void executor(const Ctx& C, int lane) {
    while (true) {
        u64 idx = 0;
        if (lane == 0) idx = atomicAdd(&C.st->item_ticket, 1ULL);
        idx = __shfl_sync(0xffffffffu, idx, 0);
        // Wait on the read-only published counter (device memory only, rule 1).
        bool stop = false;
        if (lane == 0) {
            unsigned ns = 64;
            while (vload(&C.st->items_published) <= idx) {
                if (vload(&C.st->stop)) { stop = true; break; }
                __nanosleep(ns);
                if (ns < 1024) ns <<= 1;
            }
        }
        stop = __shfl_sync(0xffffffffu, stop, 0);
        if (stop) return;
        Item it;
        {
            int4 raw = __ldcg(reinterpret_cast<const int4*>(C.items + (idx % MAXI)));
            it.tau_lo = raw.x; it.tau_hi = raw.y; it.slot_plan = raw.z; it.chunk = raw.w;
        }
        __syncwarp();
        if (lane == 0) vstore(&C.item_free[idx % MAXI], (i64)(idx + MAXI));
        int tau = it.tau_lo;
        Upd* u = C.upd + (tau % MAXU);
        if (lane == 0 && __ldcg((const unsigned long long*)&u->t_start) == 0ULL)
            atomicCAS((unsigned long long*)&u->t_start, 0ULL, (unsigned long long)gtime());
        u64 found = run_item(C, it, lane);
        if (lane == 0 && found)
            atomicAdd(&C.upd_count[(size_t)(tau % MAXU) * QMAX + (it.slot_plan >> 16)], found);
        __threadfence_system();
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
    __syncwarp();
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
    __syncwarp();
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
            unsigned tm = __ballot_sync(0xffffffffu, mine);
            int cls = mine ? ver.cls : -1;
            unsigned peers = __match_any_sync(0xffffffffu, cls);
            int leader = __ffs(peers) - 1;
            u64 slab_units = 0;
            if (mine) {
                u64 ft = C.st->free_tail[cls];  // only the collector writes tails
                int rank = __popc(peers & lanemask_lt());
                C.slab_free[class_base(C, cls) + (ft + rank) % (C.nslabs >> cls)] = ver.slab;
                C.ver_free[(C.st->ver_free_tail + lane) % C.maxver] = v;
                slab_units = 1ULL << cls;
            }
            for (int d = 16; d > 0; d >>= 1) slab_units += __shfl_down_sync(0xffffffffu, slab_units, d);
            __threadfence();
            __syncwarp();
            if (mine && lane == leader) vstore(&C.st->free_tail[cls], C.st->free_tail[cls] + __popc(peers));
            __syncwarp();
            if (lane == 0) {
                vstore(&C.st->ver_free_tail, C.st->ver_free_tail + take);
                atomicAdd(&C.st->slabs_in_use, (u64)0 - slab_units);
                atomicAdd(&C.st->versions_in_use, (u64)0 - (u64)take);
            }
            h += take;
            total_freed += take;
            (void)tm;
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
        }
        __syncwarp();
        int stop = __shfl_sync(0xffffffffu, (int)vload(&C.st->stop), 0);
        if (stop) return;
        __nanosleep(2000);
    }
}

// ---------------------------------------------------------------------------------------
// Graph updater (section 5)

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

// Live entry of neighbour y in version v (dt == INF), or -1.
__device__ int find_live(const Ctx& C, int v, int y) {
    if (v < 0) return -1;
    Version ver = load_version(C.vers + v);
    int off = ver.slab * 32, lo = 0, hi = ver.len;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (__ldcg(&C.entries[off + mid].nbr) < y) lo = mid + 1; else hi = mid;
    }
    for (; lo < ver.len; ++lo) {
        Entry e = load_entry(C.entries + off + lo);
        if (e.nbr != y) return -1;
        if (e.dt == INF_TS) return off + lo;
    }
    return -1;
}

__device__ __forceinline__ int ceil_log2(unsigned x) { return x <= 1 ? 0 : 32 - __clz(x - 1); }

#define MAXSEG (2 * BATCH_MAX)
#define MAXQP (QMAX * PMAX)

// Shared state of the updater warps (block 0). Warp 0 writes the batch, the slot table and
// the segment table; all updater warps read them in the copy and item phases.
struct UpdShared {
    InRec rec[BATCH_MAX];
    int tau0;                    // tau of rec[0]
    int nb;                      // updates in the batch
    int stop;                    // STOP seen: drain and exit after this batch
    int fatal;
    int outcome[BATCH_MAX];
    int elab[BATCH_MAX];         // label of the edge each applied update touches
    u64 taken[BATCH_MAX];
    int len_a[BATCH_MAX];        // version lengths of a and b at the update's tau
    int len_b[BATCH_MAX];
    int nitems[BATCH_MAX];       // work items cut for each update (shared atomics)
    int item_count;              // items cut in this batch (shared atomic)
    // Query slots (warp 0 keeps these and st->q_* in step; reading shared memory keeps the
    // per-update slot checks off global memory).
    i64 qf[QMAX], qu[QMAX];
    int qn[QMAX], qc[QMAX];
    int nqp;
    int qp[MAXQP];               // (slot << 16 | plan) of slots live somewhere in the batch
    // Half edges (x, update index, side) of applied updates, sorted by (x, index).
    unsigned long long half[MAXSEG];
    int nh;
    // Segments: one per vertex whose neighbour array changes.
    int nseg;
    int seg_h0[MAXSEG + 1];      // first half edge
    int seg_cur[MAXSEG];         // current version (-1 if none)
    int seg_new[MAXSEG];         // new version (-1 if no insertion)
    int seg_first_ins[MAXSEG];   // first insertion half edge, -1 if none
    int seg_oldlen[MAXSEG];
    int seg_dead[MAXSEG];        // entries of the current version that are already dead
    int seg_off[MAXSEG];         // entry offset of the current / new version
    int seg_noff[MAXSEG];
    int seg_nins[MAXSEG];
    int seg_cls[MAXSEG];
    int seg_chunk0[MAXSEG + 1];
    int seg_live[MAXSEG];
    int pick[32];                // allocation results, by rank in a group of lanes
    int nchunks;
    u64 first_seen;              // %globaltimer when the batch's first record was read
};

__device__ __forceinline__ int half_x(unsigned long long h) { return (int)(h >> 32); }
__device__ __forceinline__ int half_i(unsigned long long h) { return (int)((h >> 1) & 0x7fff); }
__device__ __forceinline__ int half_side(unsigned long long h) { return (int)(h & 1); }
__device__ __forceinline__ int half_y(const UpdShared& S, unsigned long long h) {
    const InRec& r = S.rec[half_i(h)];
    return half_side(h) ? r.a : r.b;
}

// Form the next batch (warp 0): up to BATCH_MAX updates, or what arrived within
// BATCH_TIMEOUT_NS of the first one; control records are applied in stream order.
__device__ void form_batch(const Ctx& C, UpdShared& S, int lane) {
    int nb = 0;
    int stop = 0;
    u64 first_seen = 0;
    u64 tau0 = C.st->next_tau;
    u64 head = C.st->in_head;
    while (true) {
        relay(C);
        u64 tail = 0;
        if (lane == 0) tail = vload(&C.hctl->in_tail);
        tail = __shfl_sync(0xffffffffu, tail, 0);
        // Read up to 32 records at once, one per lane (host reads are ~1 us each).
        while (head < tail && nb < BATCH_MAX && !stop) {
            u64 avail = min((u64)32, tail - head);
            InRec r;
            if (lane < avail) {
                // Three 16-byte uncached loads per record, all in flight at once.
                const int4* src = reinterpret_cast<const int4*>(C.in_ring + (head + lane) % C.in_cap);
                int4 w0 = __ldcv(src), w1 = __ldcv(src + 1), w2 = __ldcv(src + 2);
                r.kind = w0.x; r.a = w0.y; r.b = w0.z; r.label = w0.w;
                r.a_label = w1.x; r.b_label = w1.y;
                r.ext_a = ((i64)(unsigned)w1.w << 32) | (unsigned)w1.z;
                r.ext_b = ((i64)(unsigned)w2.y << 32) | (unsigned)w2.x;
                r.arrival_ns = ((i64)(unsigned)w2.w << 32) | (unsigned)w2.z;
            }
            u64 now = gtime();
            // Accept records in order (control records change state between updates).
            int took = 0;
            for (int k = 0; k < (int)avail && nb < BATCH_MAX && !stop; ++k) {
                int kind = __shfl_sync(0xffffffffu, r.kind, k);
                int ra = __shfl_sync(0xffffffffu, r.a, k);
                int rb = __shfl_sync(0xffffffffu, r.b, k);
                int rl = __shfl_sync(0xffffffffu, r.label, k);
                u64 tau = tau0 + nb;
                if (kind == REC_INSERT || kind == REC_DELETE) {
                    // An update slot is reused only once the host has read its previous
                    // occupant's completion record.
                    if (tau > MAXU && vload(&C.st->done_consumed) < tau - MAXU) break;
                    if (lane == k) { S.rec[nb] = r; S.taken[nb] = now; }
                    ++nb;
                } else if (kind == REC_REGISTER) {
                    if (lane == 0) {
                        S.qc[ra] = rb; S.qn[ra] = rl; S.qu[ra] = 0x7fffffffffffffffLL; S.qf[ra] = (i64)tau;
                        C.st->q_count[ra] = rb; C.st->q_nplans[ra] = rl;
                        C.st->q_until[ra] = 0x7fffffffffffffffLL; vstore(&C.st->q_from[ra], (i64)tau);
                    }
                } else if (kind == REC_UNREGISTER) {
                    if (lane == 0) { S.qu[ra] = (i64)tau; vstore(&C.st->q_until[ra], (i64)tau); }
                } else if (kind == REC_STOP) {
                    stop = 1;
                }
                ++took;
            }
            __syncwarp();
            head += took;
            if (lane == 0) { C.st->in_head = head; C.dstat->in_consumed = head; }
            if (took < (int)avail) break;  // waiting for a slot, or batch full, or stop
        }
        if (nb > 0 && first_seen == 0) first_seen = gtime();
        if (nb == BATCH_MAX || stop) break;
        if (nb > 0 && gtime() - first_seen >= BATCH_TIMEOUT_NS) break;
        __nanosleep(nb ? 500 : 2000);
    }
    if (lane == 0) { S.nb = nb; S.stop = stop; S.tau0 = (int)tau0; S.first_seen = first_seen; }
    __syncwarp();
}

// Outcome of every update (warp 0): per endpoint pair, walk its updates in order from the
// pair's state in the current graph (insert of a present edge / delete of an absent one is
// a no-op). Then the sorted half edges, the segments, and the in-place prefix deletions.
__device__ void classify(const Ctx& C, UpdShared& S, int lane) {
    int nb = S.nb;
    for (int i = lane; i < nb; i += 32) {
        const InRec& r = S.rec[i];
        C.vlab[r.a] = r.a_label;  // first-seen labels were fixed by the host
        C.vlab[r.b] = r.b_label;
        C.ext[r.a] = r.ext_a;
        C.ext[r.b] = r.ext_b;
    }
    __threadfence();
    __syncwarp();
    for (int i = lane; i < nb; i += 32) {
        int lo = min(S.rec[i].a, S.rec[i].b), hi = max(S.rec[i].a, S.rec[i].b);
        bool head = true;
        for (int j = 0; j < i; ++j)
            if (min(S.rec[j].a, S.rec[j].b) == lo && max(S.rec[j].a, S.rec[j].b) == hi) { head = false; break; }
        if (!head) continue;
        int e = find_live(C, __ldcg(C.head + lo), hi);
        bool exists = e >= 0;
        int lab = exists ? __ldcg(&C.entries[e].elab) : 0;
        for (int k = i; k < nb; ++k) {
            if (min(S.rec[k].a, S.rec[k].b) != lo || max(S.rec[k].a, S.rec[k].b) != hi) continue;
            bool ins = S.rec[k].kind == REC_INSERT;
            if (ins != exists) {
                S.outcome[k] = OUT_APPLIED;
                if (ins) lab = S.rec[k].label;
                exists = ins;
            } else {
                S.outcome[k] = OUT_NOOP;
            }
            S.elab[k] = lab;
        }
    }
    __syncwarp();
    // Half edges of applied updates, sorted by (vertex, update index) with a rank sort.
    if (lane == 0) {
        int nh = 0;
        for (int i = 0; i < nb; ++i) {
            if (S.outcome[i] != OUT_APPLIED) continue;
            S.half[nh++] = ((unsigned long long)S.rec[i].a << 32) | ((unsigned)i << 1);
            S.half[nh++] = ((unsigned long long)S.rec[i].b << 32) | ((unsigned)i << 1) | 1u;
        }
        S.nh = nh;
    }
    __syncwarp();
    int nh = S.nh;
    const int R = (MAXSEG + 31) / 32;
    unsigned long long mine[R];
    int rank[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        int k = lane + 32 * r;
        rank[r] = -1;
        if (k < nh) {
            unsigned long long key = S.half[k] >> 1;  // (x, i): unique, a != b
            mine[r] = S.half[k];
            int cnt = 0;
            for (int j = 0; j < nh; ++j) cnt += (S.half[j] >> 1) < key;
            rank[r] = cnt;
        }
    }
    __syncwarp();
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (rank[r] >= 0) S.half[rank[r]] = mine[r];
    __syncwarp();
    if (lane == 0) {
        int ns = 0;
        for (int k = 0; k < nh; ++k)
            if (k == 0 || half_x(S.half[k]) != half_x(S.half[k - 1])) S.seg_h0[ns++] = k;
        S.seg_h0[ns] = nh;
        S.nseg = ns;
    }
    __syncwarp();
    for (int g = lane; g < S.nseg; g += 32) {
        int x = half_x(S.half[S.seg_h0[g]]);
        int cur = __ldcg(C.head + x);
        int first_ins = -1, nins = 0, dead_now = 0;
        for (int k = S.seg_h0[g]; k < S.seg_h0[g + 1]; ++k) {
            const InRec& r = S.rec[half_i(S.half[k])];
            if (r.kind == REC_INSERT) { if (first_ins < 0) first_ins = k; ++nins; continue; }
            if (first_ins >= 0) continue;
            // Deleted before the batch's first insertion into this array: edit in place.
            int e = find_live(C, cur, half_y(S, S.half[k]));
            C.entries[e].dt = S.tau0 + half_i(S.half[k]);
            ++dead_now;
        }
        int oldlen = 0, dead = 0, off = 0;
        if (cur >= 0) {
            Version ver = load_version(C.vers + cur);
            oldlen = ver.len; off = ver.slab * 32;
            dead = ver.pad0 + dead_now;
            C.vers[cur].pad0 = dead;  // dead-entry count: lets a later copy skip compaction
        }
        S.seg_cur[g] = cur;
        S.seg_first_ins[g] = first_ins;
        S.seg_nins[g] = nins;
        S.seg_oldlen[g] = oldlen;
        S.seg_dead[g] = dead;
        S.seg_off[g] = off;
        S.seg_new[g] = -1;
        S.seg_cls[g] = first_ins >= 0 ? ceil_log2((unsigned)((oldlen + nins + 31) / 32)) : -1;
    }
    __threadfence();
    __syncwarp();
}

// Pop k items (whole warp): first from a free ring [head, tail) of capacity cap at `ring`,
// then from a bump region of `bump_cap` units of `unit`; results go to S.pick[0..k). Lane 0
// moves the counters, all lanes read ring entries at once. Waits for the collector while
// both are empty; false if that can never end.
__device__ bool pop_group(const Ctx& C, UpdShared& S, int k, u64* head, const u64* tail,
                          const int* ring, u64 cap, u64* bump, u64 bump_cap, u64 unit, int lane) {
    int got = 0;
    u64 spins = 0;
    while (got < k) {
        u64 h = 0, b0 = 0;
        int a = 0, nbump = 0;
        if (lane == 0) {
            h = *head;
            a = (int)min((u64)(k - got), vload(tail) - h);
            *head = h + a;
            b0 = *bump;
            nbump = (int)min((u64)(k - got - a), (bump_cap - b0) / unit);
            *bump = b0 + nbump * unit;
        }
        h = __shfl_sync(0xffffffffu, h, 0);
        a = __shfl_sync(0xffffffffu, a, 0);
        b0 = __shfl_sync(0xffffffffu, b0, 0);
        nbump = __shfl_sync(0xffffffffu, nbump, 0);
        for (int r = lane; r < a; r += 32) S.pick[got + r] = vload(ring + (h + r) % cap);
        for (int r = lane; r < nbump; r += 32) S.pick[got + a + r] = (int)(b0 + r * unit);
        got += a + nbump;
        if (got < k) {
            // Backpressure: the pool is empty; wait for the collector.
            int stuck = 0;
            if (lane == 0) { relay(C); stuck = pool_stuck(C) && ++spins > 100000; }
            if (__shfl_sync(0xffffffffu, stuck, 0)) return false;
            __nanosleep(1000);
        }
    }
    __syncwarp();
    return true;
}

// Allocate every new version's slab run and id (warp 0): lanes take segments, and each
// group of lanes wanting the same size class pops its runs at once.
__device__ void allocate(const Ctx& C, UpdShared& S, int lane) {
    bool fatal = false;
    for (int base = 0; base < S.nseg && !fatal; base += 32) {
        int g = base + lane;
        int cls = g < S.nseg ? S.seg_cls[g] : -1;
        unsigned pending = __ballot_sync(0xffffffffu, cls >= 0);
        if (!pending) continue;
        unsigned want_v = pending;
        // Version ids.
        int kv = __popc(want_v);
        bool ok = pop_group(C, S, kv, &C.st->ver_free_head, &C.st->ver_free_tail, C.ver_free,
                            C.maxver, &C.st->ver_bump, C.maxver, 1, lane);
        if (lane == 0) {
            if (ok) atomicAdd(&C.st->versions_in_use, (u64)kv);
            else vstore(&C.dstat->error, (u64)ERR_VERSIONS_EXHAUSTED);
        }
        if (!ok) { fatal = true; break; }
        if ((want_v >> lane) & 1) S.seg_new[g] = S.pick[__popc(want_v & lanemask_lt())];
        __syncwarp();
        // Slab runs, one size class at a time.
        while (pending) {
            int leader = __ffs(pending) - 1;
            int cc = __shfl_sync(0xffffffffu, cls, leader);
            unsigned grp = __ballot_sync(0xffffffffu, cls == cc) & pending;
            int k = __popc(grp);
            ok = pop_group(C, S, k, &C.st->free_head[cc], &C.st->free_tail[cc],
                           C.slab_free + class_base(C, cc), C.nslabs >> cc, &C.st->slab_bump,
                           C.nslabs, 1ULL << cc, lane);
            if (lane == 0) {
                if (ok) atomicAdd(&C.st->slabs_in_use, (u64)k << cc);
                else vstore(&C.dstat->error, (u64)ERR_POOL_EXHAUSTED);
            }
            if (!ok) { fatal = true; break; }
            if ((grp >> lane) & 1) {
                int slab = S.pick[__popc(grp & lanemask_lt())];
                Version* nv = C.vers + S.seg_new[g];
                nv->slab = slab; nv->len = 0; nv->cls = cc; nv->ct_min = INF_TS; nv->dt_max = INF_TS;
                nv->prev = S.seg_cur[g]; nv->pad0 = 0; nv->pad1 = 0;
                S.seg_noff[g] = slab * 32;
            }
            __syncwarp();
            pending &= ~grp;
        }
    }
    if (lane == 0) {
        int chunks = 0;
        for (int g = 0; g < S.nseg; ++g) {
            S.seg_chunk0[g] = chunks;
            if (S.seg_new[g] >= 0) chunks += (S.seg_oldlen[g] + 31) / 32;
        }
        S.seg_chunk0[S.nseg] = chunks;
        S.nchunks = chunks;
        if (chunks > MAXCHUNK) { vstore(&C.dstat->error, (u64)ERR_CHUNKS); fatal = true; }
        S.fatal = fatal;
    }
    __syncwarp();
}

__device__ __forceinline__ int seg_of_chunk(const UpdShared& S, int gc) {
    int lo = 0, hi = S.nseg - 1;
    while (lo < hi) {  // last segment with chunk0 <= gc (empty segments share chunk0)
        int mid = (lo + hi + 1) >> 1;
        if (S.seg_chunk0[mid] <= gc) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// Live entries of segment g's current version before index j (from the chunk masks and
// offsets of phases A and B; every entry is live when the version has no dead entry).
__device__ __forceinline__ int live_before(const Ctx& C, const UpdShared& S, int g, int j) {
    if (S.seg_dead[g] == 0) return j;
    int c = S.seg_chunk0[g] + j / 32;
    if (j % 32 == 0) return j / 32 == (S.seg_oldlen[g] + 31) / 32 ? S.seg_live[g] : C.chunkoff[c];
    return C.chunkoff[c] + __popc(C.chunkmask[c] & ((1u << (j % 32)) - 1u));
}

#define COPY_UNROLL 4

// The parallel multi-array copy over all updater warps (a "super-warp"): each new version
// receives the live entries of its current version merged with the batch's insertions, at
// positions from prefix sums over live counts, so many short arrays and one long one copy
// at once. Versions without dead entries skip the compaction scan (phases A and B).
__device__ void copy_versions(const Ctx& C, UpdShared& S, int w, int lane) {
    int nchunks = S.nchunks;
    // Phase A: live masks of the 32-entry chunks of versions that have dead entries.
    for (int gc = w; gc < nchunks; gc += N_UPDATERS) {
        int g = seg_of_chunk(S, gc);
        if (S.seg_dead[g] == 0) continue;
        int j = (gc - S.seg_chunk0[g]) * 32 + lane;
        bool live = j < S.seg_oldlen[g] && __ldcg(&C.entries[S.seg_off[g] + j].dt) == INF_TS;
        unsigned mask = __ballot_sync(0xffffffffu, live);
        if (lane == 0) C.chunkmask[gc] = mask;
    }
    __threadfence_block();
    named_barrier_updaters();
    // Phase B: exclusive scan of live counts within each such segment.
    for (int g = w; g < S.nseg; g += N_UPDATERS) {
        if (S.seg_new[g] < 0) continue;
        if (S.seg_dead[g] == 0) { if (lane == 0) S.seg_live[g] = S.seg_oldlen[g]; continue; }
        int c0 = S.seg_chunk0[g], c1 = c0 + (S.seg_oldlen[g] + 31) / 32;
        int carry = 0;
        for (int base = c0; base < c1; base += 32) {
            int c = base + lane;
            int cnt = c < c1 ? __popc(C.chunkmask[c]) : 0;
            int incl = cnt;
            for (int d = 1; d < 32; d <<= 1) {
                int v = __shfl_up_sync(0xffffffffu, incl, d);
                if (lane >= d) incl += v;
            }
            if (c < c1) C.chunkoff[c] = carry + incl - cnt;
            carry += __shfl_sync(0xffffffffu, incl, 31);
        }
        if (lane == 0) S.seg_live[g] = carry;
    }
    __threadfence_block();
    named_barrier_updaters();
    // Phase C: scatter live entries; COPY_UNROLL chunks per step keep several loads in flight.
    for (int gc0 = w; gc0 < nchunks; gc0 += N_UPDATERS * COPY_UNROLL) {
        Entry e[COPY_UNROLL];
        int g[COPY_UNROLL], j[COPY_UNROLL];
        bool valid[COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; ++u) {
            int gc = gc0 + u * N_UPDATERS;
            valid[u] = gc < nchunks;
            g[u] = valid[u] ? seg_of_chunk(S, gc) : 0;
            j[u] = valid[u] ? (gc - S.seg_chunk0[g[u]]) * 32 + lane : 0;
            valid[u] = valid[u] && j[u] < S.seg_oldlen[g[u]];
            if (valid[u]) e[u] = load_entry(C.entries + S.seg_off[g[u]] + j[u]);
        }
#pragma unroll
        for (int u = 0; u < COPY_UNROLL; ++u) {
            if (!valid[u] || e[u].dt != INF_TS) continue;
            int gg = g[u];
            int ins_less = 0;
            for (int k = S.seg_first_ins[gg]; k < S.seg_h0[gg + 1]; ++k) {
                unsigned long long h = S.half[k];
                ins_less += S.rec[half_i(h)].kind == REC_INSERT && half_y(S, h) < e[u].nbr;
            }
            int pos = live_before(C, S, gg, j[u]) + ins_less;
            *reinterpret_cast<int4*>(C.entries + S.seg_noff[gg] + pos) =
                make_int4(e[u].nbr, e[u].elab, e[u].ct, e[u].dt);
        }
    }
    // Inserted entries: after live entries of the same neighbour, among themselves by tau.
    for (int g = w; g < S.nseg; g += N_UPDATERS) {
        if (S.seg_new[g] < 0) continue;
        int h0 = S.seg_first_ins[g], h1 = S.seg_h0[g + 1];
        for (int k = h0 + lane; k < h1; k += 32) {
            int i = half_i(S.half[k]);
            const InRec& r = S.rec[i];
            if (r.kind != REC_INSERT) continue;
            int y = half_y(S, S.half[k]);
            int rank = 0;
            for (int k2 = h0; k2 < h1; ++k2) {
                unsigned long long h2 = S.half[k2];
                if (S.rec[half_i(h2)].kind != REC_INSERT) continue;
                int y2 = half_y(S, h2);
                rank += y2 < y || (y2 == y && k2 < k);
            }
            int lo = 0, hi = S.seg_oldlen[g];
            while (lo < hi) {  // first old entry with nbr > y
                int mid = (lo + hi) >> 1;
                if (__ldcg(&C.entries[S.seg_off[g] + mid].nbr) <= y) lo = mid + 1; else hi = mid;
            }
            int pos = rank + live_before(C, S, g, lo);
            *reinterpret_cast<int4*>(C.entries + S.seg_noff[g] + pos) = make_int4(y, r.label, S.tau0 + i, INF_TS);
        }
    }
    __threadfence();
    named_barrier_updaters();
}

// Deletions after the first insertion mark the new version; then every new version is
// published (head) and its predecessor retired to the collector (warp 0).
__device__ void publish_versions(const Ctx& C, UpdShared& S, int lane) {
    for (int g = lane; g < S.nseg; g += 32) {
        int v = S.seg_new[g];
        if (v < 0) continue;
        C.vers[v].len = S.seg_live[g] + S.seg_nins[g];
        __threadfence();
        int dead = 0;
        for (int k = S.seg_first_ins[g]; k < S.seg_h0[g + 1]; ++k) {
            int i = half_i(S.half[k]);
            if (S.rec[i].kind != REC_DELETE) continue;
            int e = find_live(C, v, half_y(S, S.half[k]));
            C.entries[e].dt = S.tau0 + i;
            ++dead;
        }
        int first_tau = S.tau0 + half_i(S.half[S.seg_first_ins[g]]);
        C.vers[v].pad0 = dead;
        C.vers[v].ct_min = first_tau;
        int cur = S.seg_cur[g];
        if (cur >= 0) C.vers[cur].dt_max = first_tau - 1;
    }
    __threadfence();
    __syncwarp();
    // Publish (lanes over segments) and retire the predecessors into the GC queue.
    u64 t = C.st->gcq_tail;
    for (int base = 0; base < S.nseg; base += 32) {
        int g = base + lane;
        int v = g < S.nseg ? S.seg_new[g] : -1;
        if (v >= 0) vstore(C.head + half_x(S.half[S.seg_h0[g]]), v);
        bool push = v >= 0 && S.seg_cur[g] >= 0;
        unsigned pm = __ballot_sync(0xffffffffu, push);
        int cnt = __popc(pm);
        if (lane == 0)
            while (t + cnt - vload(&C.st->gcq_head) > C.gcq_cap) { relay(C); __nanosleep(1000); }
        __syncwarp();
        if (push) C.gcq[(t + __popc(pm & lanemask_lt())) % C.gcq_cap] = S.seg_cur[g];
        t += cnt;
    }
    __threadfence();
    __syncwarp();
    if (lane == 0) vstore(&C.st->gcq_tail, t);
    __syncwarp();
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

// Cut the batch's applied updates into work items for every live (slot, plan) pair, over
// all updater warps, and publish them; updates with nothing to match complete here.
__device__ void publish_items(const Ctx& C, UpdShared& S, int w, int lane) {
    int nb = S.nb, tid = w * 32 + lane;
    const int NT = N_UPDATERS * 32;
    if (w == 0) {
        // (slot, plan) pairs of slots live somewhere in [tau0, tau0 + nb).
        int q = lane;
        int np = 0;
        if (q < QMAX && S.qn[q] > 0 && S.qf[q] < (i64)S.tau0 + nb && S.qu[q] > (i64)S.tau0) np = S.qn[q];
        int incl = np;
        for (int d = 1; d < 32; d <<= 1) {
            int v = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d) incl += v;
        }
        for (int p = 0; p < np; ++p) S.qp[incl - np + p] = (q << 16) | p;
        if (lane == 31) S.nqp = incl;
        if (lane == 0) S.item_count = 0;
    }
    for (int i = tid; i < nb; i += NT) {
        int tau = S.tau0 + i;
        S.nitems[i] = 0;
        for (int q = 0; q < QMAX; ++q) C.upd_count[(size_t)(tau % MAXU) * QMAX + q] = 0;
        if (S.outcome[i] == OUT_APPLIED) {
            int off;
            find_version(C, S.rec[i].a, tau, off, S.len_a[i]);
            find_version(C, S.rec[i].b, tau, off, S.len_b[i]);
        }
    }
    __threadfence_block();
    named_barrier_updaters();
    u64 first = vload(&C.st->items_published) + C.st->held_items;
    int nqp = S.nqp;
    for (int k = tid; k < nb * nqp; k += NT) {
        int i = k / nqp, qp = S.qp[k % nqp];
        int q = qp >> 16, p = qp & 0xffff;
        int tau = S.tau0 + i;
        if (S.outcome[i] != OUT_APPLIED || !(S.qf[q] <= tau && tau < S.qu[q])) continue;
        const int* pl = plan_ptr(C, q, p);
        if (!start_ok(C, pl, S.rec[i].a, S.rec[i].b, S.elab[i])) continue;
        int nchunk = 1;
        if (__ldcg(pl + PL_N) > 2) {
            // Same choice as the executor's base_of_step2 (first shortest list).
            int nbk = __ldcg(pl + PL_BNCNT + 2), len = 0x7fffffff;
            for (int kk = 0; kk < nbk; ++kk) {
                int l = __ldcg(pl + PL_BNPOS + 2 * KMAX + kk) == 0 ? S.len_a[i] : S.len_b[i];
                len = min(len, l);
            }
            nchunk = max(1, (len + CHUNK - 1) / CHUNK);
        }
        int at = atomicAdd(&S.item_count, nchunk);
        atomicAdd(&S.nitems[i], nchunk);
        for (int c = 0; c < nchunk; ++c) {
            u64 idx = first + at + c;
            while (vload(&C.item_free[idx % MAXI]) < (i64)idx) __nanosleep(500);  // slot read?
            C.items[idx % MAXI] = Item{tau, 0, qp, c};
        }
    }
    __threadfence_block();
    named_barrier_updaters();
    if (w != 0) return;
    for (int i = lane; i < nb; i += 32) {
        int tau = S.tau0 + i;
        Upd* u = C.upd + (tau % MAXU);
        const InRec& r = S.rec[i];
        u->a = r.a; u->b = r.b; u->elab = S.elab[i]; u->op = r.kind == REC_INSERT ? 1 : -1;
        u->outcome = S.outcome[i];
        u->pending = S.nitems[i];
        u->tau = tau;
        u->t_taken = S.taken[i];
        u->t_start = 0;
    }
    __threadfence();
    __syncwarp();
    relay(C);
    if (lane == 0) {
        u64 next = first + S.item_count;
        C.st->next_tau = S.tau0 + nb;
        u64 published = vload(&C.st->items_published);
        if (vload(&C.st->hold_publish) && !S.stop && next - published < MAXI / 2) {
            C.st->held_items = next - published;
        } else {
            C.st->held_items = 0;
            __threadfence();
            vstore(&C.st->items_published, next);
        }
    }
    __syncwarp();
    for (int i = lane; i < nb; i += 32)
        if (S.nitems[i] == 0) finalize_empty(C, S.tau0 + i);
    __syncwarp();
}

__device__ void updater(const Ctx& C, int w, int lane) {
    __shared__ UpdShared S;
    if (w == 0) {
        for (int q = lane; q < QMAX; q += 32) {
            S.qf[q] = C.st->q_from[q]; S.qu[q] = C.st->q_until[q];
            S.qn[q] = C.st->q_nplans[q]; S.qc[q] = C.st->q_count[q];
        }
        if (lane == 0) {
            C.dstat->clock_ns = gtime();
            C.dstat->running = 1;
            __threadfence_system();
        }
        __syncwarp();
    }
    const bool clock = w == 0 && lane == 0;
    while (true) {
        if (w == 0) form_batch(C, S, lane);
        named_barrier_updaters();
        int nb = S.nb, stop = S.stop;
        if (nb > 0) {
            u64 t[5];
            t[0] = clock ? gtime() : 0;
            if (w == 0) { classify(C, S, lane); allocate(C, S, lane); }
            named_barrier_updaters();
            if (S.fatal) break;
            t[1] = clock ? gtime() : 0;
            copy_versions(C, S, w, lane);
            t[2] = clock ? gtime() : 0;
            if (w == 0) publish_versions(C, S, lane);
            named_barrier_updaters();
            t[3] = clock ? gtime() : 0;
            publish_items(C, S, w, lane);
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
            if (C.st->held_items) {
                vstore(&C.st->items_published, vload(&C.st->items_published) + C.st->held_items);
                C.st->held_items = 0;
            }
            while (!S.fatal && vload(&C.st->completed) < vload(&C.st->next_tau) - 1) {
                relay(C);
                __nanosleep(1000);
            }
            __threadfence();
            vstore(&C.st->stop, 1ULL);
            C.dstat->running = 0;
            __threadfence_system();
        }
        __syncwarp();
    }
}

extern "C" __global__ void __launch_bounds__(256, 3) dcsm_persistent(const u64* ctx_words) {
    const Ctx& C = *reinterpret_cast<const Ctx*>(ctx_words);
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (blockIdx.x == 0 && warp < N_UPDATERS) updater(C, warp, lane);
    else if (blockIdx.x == 0 && warp == N_UPDATERS) collector(C, lane);
    else executor(C, lane);
}
