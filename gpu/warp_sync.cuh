// warp_sync.cuh -- small helpers every role uses: clocks, volatile and L2 loads, warp
// joins and claims, the per-block view of the updater's job, output-ring reservation.
// Buffers: none of its own; BlockView lives in each block's shared memory (one warp
// per block refreshes it from st, every warp of the block reads it).
//
// Warp discipline. Wherever lanes write and one lane then publishes (a task done, an item
// slot freed, a completion stamped), the warp first meets in warp_join(), never in a bare
// __syncwarp() (see warp_join). CHECK=1 compiles in self-checks of the invariants above
// (enum CheckCode); gpu/engine.py raises the first violation.

// ---------------------------------------------------------------------------------------
// Small helpers

__device__ __forceinline__ u64 gtime() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The clock once v is known: the read is predicated on v, so it issues only after the load
// v came from has landed (a plain gtime() may issue before loads it follows in the source).
// Diagnostics only: a v of 0x5eed5eed reads 0.
__device__ __forceinline__ u64 gtime_after(unsigned v) {
    u64 t;
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0x5eed5eed; mov.u64 %0, 0;\n\t"
                 "@p mov.u64 %0, %%globaltimer; }"
                 : "=l"(t) : "r"(v));
    return t;
}

// The clock after every memory access before it in the source has been issued.
__device__ __forceinline__ u64 gtime_ordered() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) : : "memory");
    return t;
}

__device__ __forceinline__ u64 vload(const u64* p) { return *(const volatile u64*)p; }
__device__ __forceinline__ i64 vload(const i64* p) { return *(const volatile i64*)p; }
__device__ __forceinline__ int vload(const int* p) { return *(const volatile int*)p; }
__device__ __forceinline__ void vstore(u64* p, u64 v) { *(volatile u64*)p = v; }
__device__ __forceinline__ void vstore(i64* p, i64 v) { *(volatile i64*)p = v; }
__device__ __forceinline__ void vstore(int* p, int v) { *(volatile int*)p = v; }

// L2 reads (L1 is not coherent across blocks; everything another warp may have written
// in this launch is read this way).
template <typename T> __device__ __forceinline__ T ld(const T& x) { return __ldcg(&x); }

__device__ __forceinline__ Entry load_entry(const Entry* e) {
    int4 v = __ldcg(reinterpret_cast<const int4*>(e));
    Entry r; r.nbr = v.x; r.elab = v.y; r.ct = v.z; r.dt = v.w;
    return r;
}

// What a reader needs of version v, its first two 16-byte words: the list (slab, len, blen,
// toff), the lifetime and the chain (ct_min, dt_max, prev, x). cls, ndead, kept and pad
// are left 0.
__device__ __forceinline__ Version load_version_list(const Version* v) {
    const int4 a = __ldcg(reinterpret_cast<const int4*>(v));
    const int4 b = __ldcg(reinterpret_cast<const int4*>(v) + 1);
    Version r;
    r.slab = a.x; r.len = a.y; r.blen = a.z; r.toff = a.w;
    r.ct_min = b.x; r.dt_max = b.y; r.prev = b.z; r.x = b.w;
    r.cls = r.ndead = r.kept = r.pad = 0;
    return r;
}

// All of version v (the updater's and the collector's third word too).
__device__ __forceinline__ Version load_version(const Version* v) {
    Version r = load_version_list(v);
    const int4 c = __ldcg(reinterpret_cast<const int4*>(v) + 2);
    r.cls = c.x; r.ndead = c.y; r.kept = c.z; r.pad = c.w;
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

// ---------------------------------------------------------------------------------------
// Block view: one warp per block at a time refreshes it from global memory (at most every
// VIEW_NS), so thousands of waiting warps do not all poll the same few L2 lines.

#define MASK40 ((1ULL << 40) - 1)

// Whether the current job still has unclaimed tasks (read from the job words).
__device__ __forceinline__ bool job_open(const Ctx& C) {
    u64 w = vload(&C.st->job_word), c = vload(&C.st->job_cursor);
    return (c >> 40) == (w >> 40) && (c & MASK40) < (w & 0xffffffffULL);
}

struct BlockView { u64 last_ns; u64 reserve; int job_active; int hungry; int stop; int pad; };

__device__ void refresh_view(const Ctx& C, volatile BlockView& V, bool force = false) {
    u64 now = gtime();
    if (!force && now - V.last_ns < VIEW_NS) return;
    V.last_ns = now;
    V.job_active = job_open(C);
    u64 reserve = vload(&C.st->item_reserve);
    V.reserve = reserve;
    V.hungry = vload(&C.st->item_ticket) > reserve;
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
