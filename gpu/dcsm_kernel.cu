// dcsm_kernel.cu -- the DCSM persistent, warp-specialised kernel.
//
// Design: DCSM (continuous subgraph matching with inter-batch parallelism). Sections referred
// to below: 4 (incremental matching over a multi-version graph, Properties 1-3), 5 (the graph
// updater and the parallel multi-array copy), 6 (garbage collection). Launched once by
// gpu/engine.py (cooperative launch, so every block is co-resident and warps may spin on each
// other); it runs until the host sends STOP, and a relaunch continues on the same state.
//
// Roles by warp (block 0 holds the first N_UPDATERS warps and the collector):
//   * graph-updater warps [0, N_UPDATERS) of block 0. Warp 0 is the ONLY poller of host memory
//     (gpu-facts rule 1; READ_JOB's tasks, on any warp, read a long run of records once when the
//     host did not copy it into in_mirror): it forms batches from the input ring, applies control
//     commands, relays the host's consumption counters into device memory. A batch closes once it
//     holds BATCH_B updates or BATCH_TIMEOUT_NS have passed since its first one, and nothing more
//     is already waiting; under a backlog it grows up to BATCH_CAP updates, so a hub array is
//     copied once for many updates. The updater applies a batch as a sequence of data-parallel JOBS
//     (below): the updater warps work on every job themselves (the "super-warp"), and idle executor
//     warps join in, so a batch is applied by as much of the GPU as is not busy matching.
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
//
// Parts, in the order the loader concatenates them (each opens with the buffers it owns,
// who writes and who reads them):
#include "layout.cuh"
#include "warp_sync.cuh"
#include "checks.cuh"
#include "search_steps.cuh"
#include "mvg_read.cuh"
#include "warp_lanes.cuh"
#include "executor.cuh"
#include "collector.cuh"
#include "updater_batch.cuh"
#include "updater_jobs.cuh"
#include "updater_small.cuh"
#include "updater.cuh"

extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS) dcsm_persistent(const u64* ctx_words) {
    const Ctx& C = *reinterpret_cast<const Ctx*>(ctx_words);
    __shared__ BlockView V;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) { V.last_ns = 0; V.reserve = 0; V.job_active = 0; V.hungry = 0; V.stop = 0; }
    __syncthreads();
    if (blockIdx.x == 0 && warp < N_UPDATERS) updater(C, warp, lane);
    else if (blockIdx.x == 0 && warp == N_UPDATERS) collector(C, lane);
    else executor(C, V, lane);
}
