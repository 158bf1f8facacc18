// checks.cuh -- self-checks compiled in with CHECK=1.
// Buffers: st.check_count[code] (u64, any warp atomicAdds) and st.check_first[code]
// (the first violation's three values, written by the warp that counted first); the
// host reads both after a run and raises the first violation.

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
    CHK_MERGE,            // run_item: a merged window's candidates differ from eval_window's
    CHK_COUNT_LISTS,      // J_ITEMS: the list lengths J_COUNT took from the batch's segments
                          //   differ from the published heads' (FUSE_PUBLISH_COUNT)
    CHK_HUB_BITS,         // run_item: a bit test in a hub bitmap differs from the list's search
    CHK_SEG_COUNTER,      // a fused job: a segment's arrival count passed its target (job, g, k)
    CHK_PRE_ENT,          // J_SEGEDIT (PRE_ENT): the entry J_CLASSIFY found for an in-place
                          //   deletion differs from a search of the current version
};

#define CHECK_SENTINEL (-7)

__device__ __noinline__ void check_fail(const Ctx& C, int code, i64 a, i64 b, i64 c) {
    if (atomicAdd(&C.st->check_count[code], 1ULL) == 0) {
        i64* f = C.st->check_first[code];
        f[0] = a; f[1] = b; f[2] = c;
    }
}
