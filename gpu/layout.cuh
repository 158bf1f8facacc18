// layout.cuh -- compile-time knobs, constants and every structure the kernel shares with
// the host (gpu/layout.py mirrors them byte for byte; dcsm_sizes reports their sizes).
//
// Shared structures (dtype, layout; who allocates; who writes / reads):
//   vlab   int32[maxv]         vertex labels; host allocates; updater jobs write (from input
//                              records), executors read.
//   ext    int64[maxv]         external vertex ids (symmetry breaking compares them); as vlab.
//   head   int32[maxv]         newest version of each vertex's neighbour array, -1 if none;
//                              updater jobs write (after the version is complete), all read.
//   vmark, vseg int32[maxv]    the vertex's half edges in the bulk batch being applied (0
//                              between batches; FUSE_HALVES_COUNT 0: the batch number that
//                              last touched it), and its segment in that batch; updater
//                              jobs only.
//   entries Entry[nslabs*32]   slab pool, 32 entries a slab, 16 B an entry {nbr, elab, ct,
//                              dt}; a version owns a run of 2^cls consecutive slabs, entries
//                              sorted by (nbr, ct). Updater jobs write new runs and dt edits;
//                              executors read through L2 (__ldcg: L1 is not coherent).
//   vers   Version[maxver]     three 16-byte words {slab, len, blen, toff} {ct_min, dt_max,
//                              prev, x} {cls, ndead, kept, pad}: readers load the first two
//                              only (load_version_list). Updater jobs write, executors and
//                              GC read. A version's list is two sorted runs in its slab
//                              run: the base, entries [0, blen), and the tail, entries
//                              [toff, toff + len - blen) (docs/delta-lists.md). A batch that
//                              adds few entries to a long list writes a new tail after the
//                              old one in the same run and keeps the base (the old version
//                              is then `kept`: its run belongs to its successor, and the
//                              collector frees only its id); otherwise it merges base, tail
//                              and insertions into a new run, whose tail is empty (toff =
//                              blen = len).
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
//   in_ring InRec[in_cap]      host writes records then hctl->in_tail; updater w0 reads
//                              (a long run: every updater warp, read_run).
//   hctl   HostCtl             host writes; updater w0 reads (relays into st). in_tail packs
//                              the ring's tail (low 40 bits, << 24) with how many records
//                              before it are also in in_mirror (low 24 bits): one 8-byte
//                              word, so that the two are always read together.
//   Device memory the host copies into:
//   in_mirror InRec[in_cap]    a copy of the input ring's slots that a long write also put
//                              there (the host's copy engine, finished before in_tail
//                              names them); updater w0 (a long run: every updater warp)
//                              reads them through L2, far faster than host memory.
//   dstat  DevStatus           device writes (w0: in_consumed; GC: pool stats); host reads.
//   out    int32[out_cap]      match records [stamp, tau, slot, v0..v(n-1)]; executors write
//                              the body, then the stamp; host reads in order.
//   done   Done[MAXU], done_counts u64[QMAX*MAXU]: per-update completion records; the
//                              finishing warp writes the non-zero counts (query slot q's of
//                              update slot s at q * MAXU + s: the host reads a query's in
//                              sequence), their mask Done.nonzero and times, then the stamp tau.
//

#ifndef N_UPDATERS
#define N_UPDATERS 4
#endif
#ifndef BATCH_B
#define BATCH_B 64
#endif
#ifndef BATCH_CAP
#define BATCH_CAP 16384
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
#define BATCH_TIMEOUT_NS 0  // close a batch as soon as the input ring is empty
#endif
// CHECK=1 compiles in self-checks of the invariants the design rests on (below, "Self-checks").
#ifndef CHECK
#define CHECK 0
#endif

// Idle polling. One warp per block refreshes the block's view of the updater's job at most
// every VIEW_NS ns; an executor waiting for its item sleeps up to WAIT_NS_MAX ns between
// polls, or up to WAIT_NS_NEAR while its ticket is among the next NEAR_ITEMS items to be
// written. Thousands of idle warps polling L2 slow everything else down: with 1 us (view)
// and 1,024 ns (sleep) a batch of 3,600 updates took 1.5x as long as with 8 us and 8,192 ns
// (bench/results/gpu/NOTES.md, "Idle polling").
#ifndef VIEW_NS
#define VIEW_NS 8000
#endif
#ifndef WAIT_NS_MAX
#define WAIT_NS_MAX 8192
#endif
#ifndef WAIT_NS_NEAR
#define WAIT_NS_NEAR 512
#endif
// Updater warp 0 polls the host's input tail every IDLE_POLL_NS ns while no batch is open
// (each poll is one round trip to host memory).
#ifndef IDLE_POLL_NS
#define IDLE_POLL_NS 2000
#endif
// A batch due to close (updater_batch.cuh, form_batch) closes at once (0), or first reads
// the host's input tail once more and takes the records that arrived meanwhile (1). At 0
// the response p50 was 47 against 51 us at 10K/s, 103 against 109 at 100K/s and 433
// against 725 at 1M/s (bench/results/gpu/session11/call4, same call).
#ifndef CLOSE_RECHECK
#define CLOSE_RECHECK 0
#endif
// Updater warp 0 reads a long run of waiting records RING_WIDE a lane at once (read_wide,
// updater_batch.cuh): 32 x RING_WIDE records a round trip, in 3 x RING_WIDE registers of
// 16 bytes a lane. The oracle rows' batches of ~6,200 records took 174 us to read at 4
// (bench/results/gpu/session15/call3, step_input_read).
#ifndef RING_WIDE
#define RING_WIDE 4
#endif
// A run of at least BULK_MIN waiting records (0: never) is read into the batch by all the
// updater warps together, RUN_PART records a warp at a time (read_run, updater_batch.cuh),
// instead of by warp 0 alone one round trip after another (read_wide: ~28 ns a record,
// 0.16-0.19 ms for the oracle rows' batches, 0.46 ms for one of 16,384).
#ifndef BULK_MIN
#define BULK_MIN 1024
#endif
#ifndef NEAR_ITEMS
#define NEAR_ITEMS 256
#endif
// The short path (updater_small.cuh): batches of at most SMALL_MAX updates may be applied by
// updater warp 0 without the job pipeline (the other updater warps share its merges).
// SMALL_PATH 0: never; 1: when the cost models say it is cheaper; 2: always. The models
// start from the *0 values (nanoseconds per short batch, picoseconds per update and per
// 32-entry chunk copied on top of it; nanoseconds per bulk batch) and learn from every
// batch; every SMALL_PROBE-th eligible batch takes the other path, so that both stay
// measured.
#ifndef SMALL_PATH
#define SMALL_PATH 1
#endif
#ifndef SMALL_MAX
#define SMALL_MAX 32
#endif
#ifndef SMALL_PROBE
#define SMALL_PROBE 256
#endif
#ifndef SMALL_FIXED_NS0
#define SMALL_FIXED_NS0 25000
#endif
#ifndef SMALL_UPDATE_PS0
#define SMALL_UPDATE_PS0 3000
#endif
#ifndef SMALL_CHUNK_PS0
#define SMALL_CHUNK_PS0 100000
#endif
#ifndef BULK_NS0
#define BULK_NS0 80000
#endif
// Work donation: an executor offers the rest of a level every DONATE_EVERY steps.
#ifndef DONATE_EVERY
#define DONATE_EVERY 16
#endif
// J_SEGEDIT and J_ALLOC run as one job (1), after allocate(), or one after the other (0):
// neither reads what the other writes (J_SEGEDIT: entries' dt of the current versions,
// the insertion lists; J_ALLOC: the new versions, the current ones' dt_max and kept,
// chunkseg, and with CHECK slab_owner and sentinels in the new runs), and allocate() needs
// only J_SEGINFO's counts. A job's fixed cost is ~13-19 us a batch whatever its work
// (bench/results/gpu/session15, the oracle rows' updater). At 1 the fused job is timed as
// J_SEGEDIT's step, and HELP_MASK's J_SEGEDIT bit covers both.
#ifndef FUSE_EDIT_ALLOC
#define FUSE_EDIT_ALLOC 1
#endif
// J_HALVES counts each vertex's half edges in vmark as it claims the vertices (1), so the
// arrival ranks J_SEGCOUNT would give come from that count, J_PLACE looks each half edge's
// segment up, J_SEGSTART reads the counts and resets vmark to 0, and J_SEGCOUNT is not run;
// 0: vmark holds the batch number that last claimed the vertex, and J_SEGCOUNT runs. One
// job fewer a batch.
#ifndef FUSE_HALVES_COUNT
#define FUSE_HALVES_COUNT 1
#endif
// J_PLACE's first half edge of each segment (the lane that turns seg_h0 from -1, as J_HALVES
// leaves it, to -2) reads the segment's count from vmark, resets vmark, and claims the
// segment's place; the segment's other half edges wait for it (1). J_SEGSTART is then not
// run: one job fewer a batch (session27/updater-phases-plan.md, step B1): J_SEGSTART and
// J_PLACE took ~31 us a batch of ~8,000 updates, the fused J_PLACE ~24 us (session29).
// 0: J_SEGSTART. Needs FUSE_HALVES_COUNT.
#ifndef FUSE_SEGSTART_PLACE
#define FUSE_SEGSTART_PLACE 1
#endif
// J_COPY's unit that completes a segment (its old chunks and its insertions each count
// themselves in seg_copied) publishes the segment at once: the deletions after its first
// insertion, its head, its old version into the GC queue (1); J_COUNT's tasks join J_COPY's
// job, so J_PUBLISH is not a job of its own: one job fewer a batch
// (session27/updater-phases-plan.md, step B4). 0: J_PUBLISH after J_COPY. Needs
// FUSE_PUBLISH_COUNT. At 1 the fused job is timed as J_COPY's step: J_COPY and J_PUBLISH
// took ~84 us a batch of ~8,000 insertions, the fused J_COPY ~72 us (session29).
#ifndef FUSE_COPY_PUBLISH
#define FUSE_COPY_PUBLISH 1
#endif
// J_ALLOC sets each new version's length itself when the batch has no dead entry to compact
// (ncompact 0, as in a batch of insertions into lists without deletions), and J_SCAN is not
// run (1); 0: J_SCAN sets every length. J_SCAN then only set a version's length from its old
// and inserted entries, which J_ALLOC's task has for the same segments: one job fewer, and
// a job's fixed cost is ~13-15 us a batch (bench/results/gpu/session23).
#ifndef FUSE_ALLOC_SCAN
#define FUSE_ALLOC_SCAN 1
#endif
// J_COUNT's tasks run in J_PUBLISH's job (1), reading each endpoint's list at tau from the
// batch's segments (seg_new from its first insertion on, else seg_cur) instead of from head,
// which J_PUBLISH stores; live_plans runs before it. 0: J_COUNT after J_PUBLISH. At 1 the
// fused job is timed as J_PUBLISH's step (and updater phase 3 holds the count), and
// HELP_MASK's J_PUBLISH bit covers both. The short path counts from the heads either way.
#ifndef FUSE_PUBLISH_COUNT
#define FUSE_PUBLISH_COUNT 1
#endif
// A long run of input records that form_batch leaves to read_run (BULK_MIN or more) is read
// as a job every warp may help with (J_READ, 1), not by the updater warps alone (0). Four
// warps take 30-40 us a batch of 7,000-10,000 records (step input_run, session31, call 2);
// the job ~10 us (JOB_TRACE), yet the 22 oracle count rows lost at 1: 197.6 against 188.8
// ms in turns, every light deletion row 2.2-2.3 against 1.6-2.1 ms (session32, call 1).
#ifndef READ_JOB
#define READ_JOB 0
#endif
// J_CLASSIFY runs per half edge (1): the half edge in the pair's larger endpoint's array
// looks its live entry up beside the one that classifies (pre_ent), so that J_SEGEDIT's
// in-place deletions take their entries from there instead of searching the array again: a
// job costs its longest chain of dependent loads (bench/results/gpu/session31, call 3), and
// a binary search is J_SEGEDIT's (~30 us a batch of deletions; 14 against 28 us at 1 for Q_1
// deletion10, and every deletion row faster in turns, session32, call 1). 0: per record,
// J_SEGEDIT searches.
#ifndef PRE_ENT
#define PRE_ENT 1
#endif
// A bulk batch of deletions alone (DELETE_PATH 1) takes two jobs before J_ITEMS instead of
// the pipeline's nine (updater.cuh, apply_deletions): every half edge finds the edge's entry
// live before the batch in its array, the smaller endpoint's lowering its dt to the update's
// tau (atomicMin, so that the batch's first deletion of an edge holds it); then each update
// is applied if its tau held, ends the other array's entry, counts its dead entries and
// its work items. Deletions edit in place and make no version, so nothing else of the
// pipeline has work (session 37's Q_1 deletion10: ~0.2 ms a batch, 9 jobs of 15-50 us).
// The records form_batch takes say whether a batch holds an insertion (BatchCtl.has_ins).
// Exact (tests/gpu) and faster on every deletion row: Q_1 deletion10 1.15 against 1.42 ms,
// the 22 oracle count rows 175.69 against 178.83 ms (session39, call 1, medians of 5 turns).
// 0: every bulk batch takes the pipeline.
#ifndef DELETE_PATH
#define DELETE_PATH 1
#endif
// JOB_TRACE=1 splits each job's time three ways, summed per job kind into State.trace_ns
// (updater_jobs.cuh, job_body): from its posting to the claim of its first task (the
// helpers noticing it), from that to the claim of its last task (the hand-out), and from
// that to the job's end (its last tasks running). Tasks are claimed in index order, so the
// claimers of the first and the last store the two claim times; a job run on the updater
// warps alone (N_UPDATERS tasks or fewer) is not traced. 0: no trace.
#ifndef JOB_TRACE
#define JOB_TRACE 0
#endif
// JOB_TRACE=2: JOB_TRACE 1's split, and each task's own time (State.task_hist,
// task_slowest_ns): whether a job's tail is one slow task or many, and on which warps.
// JOB_TRACE=3: also each J_CLASSIFY task run a second time at once, its code and data warm,
// that time counted as J_VERIFY's (a job that runs only with CHECK=1); JOB_TRACE=4: a
// neighbouring task instead, its code warm, its lists not. (5 and 6, removed, timed a
// J_CLASSIFY task's parts with clock reads its loads did not hold back; 8 replaces them.)
// JOB_TRACE=7: JOB_TRACE 2, and a dependent load's and a fence's cost before J_CLASSIFY's
// tasks (probe_costs). JOB_TRACE=8: JOB_TRACE 2, and a J_CLASSIFY task's searches one lane
// alone, every lane its own, and every lane one list (probe_searches). JOB_TRACE=9:
// JOB_TRACE 2, and the parts of J_ITEMS' tasks (updater_jobs.cuh, ITEMS_PART).
#define TASK_HIST 16
// A J_ITEMS task none of whose updates has a work item completes them together
// (executor.cuh, finalize_empty_lines): their completion records go to host memory as whole
// lines, one fence and one count for the warp (1); 0: each lane completes its own
// (finalize_empty: five 8-byte stores 48 bytes apart, a fence and an atomic a lane).
#ifndef DONE_LINES
#define DONE_LINES 1
#endif
// RECORD_SM=1: updater w0 stores the SM its block runs on in DevStatus.updater_sm at launch
// (bench/debug/engine_modes.py: whether the light rows' two modes follow the updater's SM,
// a launch's placement, or an engine's memory). 0: not recorded (the default build).
#ifndef RECORD_SM
#define RECORD_SM 0
#endif
#if FUSE_SEGSTART_PLACE && !FUSE_HALVES_COUNT
#error "FUSE_SEGSTART_PLACE needs FUSE_HALVES_COUNT (the counts in vmark)"
#endif
#if FUSE_COPY_PUBLISH && !FUSE_PUBLISH_COUNT
#error "FUSE_COPY_PUBLISH needs FUSE_PUBLISH_COUNT (J_COUNT's tasks from the batch's segments)"
#endif
// Old chunks of 32 entries a J_COPY task copies (updater_jobs.cuh): its lanes load one
// entry of each before they place any. A job waits for its longest task, and a lane places
// its chunks' entries one after another (merged_pos), so the task holding a hub's chunks
// sets the job's time: J_COPY took 105 / 235 / 576 us a batch of Q_7 insertion10 at 4 / 8 /
// 16, and the 22 oracle count rows 182.6 / 189.9 / 195.0 ms at 1 / 2 / 4, in turns (the
// heavy rows 5-10 % faster at 1; bench/results/gpu/session31, calls 4-5).
#ifndef COPY_UNROLL
#define COPY_UNROLL 1
#endif
// Old chunks a J_MASK task masks. Its work a chunk is one load a lane and a ballot, so more
// tasks cost more than they spread: at 1 (with COPY_UNROLL, before the two were apart)
// J_MASK took 40 against 24 us a batch of Q_7 insertion10 at 4 (session31, call 5); apart,
// the 22 oracle count rows 188.8 against 197.4 ms at 1, in turns (session32, call 1).
#ifndef MASK_UNROLL
#define MASK_UNROLL 4
#endif
#if COPY_UNROLL > 32 || COPY_UNROLL < 1 || MASK_UNROLL < 1
#error "COPY_UNROLL must be 1..32 (lane u counts chunk u of a task), MASK_UNROLL at least 1"
#endif
// Job kinds executor warps help with (all; a bit mask so that a suspected race can be
// bisected by job, as bench/results/gpu/NOTES.md describes).
#ifndef HELP_MASK
#define HELP_MASK 0xffffffffu
#endif
// Counting, an executor walks the last level of every candidate of a level n-2 window at
// once (count_last_pairs; windows of two candidates or more) when that candidate's scan
// has at most PAIRS_MAX_LIST entries; longer scans are walked alone (and can be donated).
// 0: never.
#ifndef PAIRS_MAX_LIST
#define PAIRS_MAX_LIST 128
#endif
// Counting, an executor counts a last level with exactly two lists (the one it scans, the
// other each candidate must be in) by merging them: 32 entries of the scanned list a step,
// against the stretch of the other list that they span, read 32 entries a round by the
// whole warp (merge_window), instead of a binary search of the other list a lane
// (docs/hub-probes.md, "Merging hub pairs"). Only where the scanned list has at least
// MERGE_MIN entries and the other at most MERGE_RATIO times as many. 0: never. MERGE_MIN
// 1024 rather than 128: the 43M 4-cycle alike (247,624 against 247,604/s), the oracle
// count rows 5.6 % faster (bench/results/gpu/session13, call 6).
#ifndef MERGE_LAST
#define MERGE_LAST 1
#endif
#ifndef MERGE_MIN
#define MERGE_MIN 1024
#endif
#ifndef MERGE_RATIO
#define MERGE_RATIO 8
#endif
// Counting, the last level's membership tests in a list fixed for a whole item (a backward
// neighbour matched before the item's level: the 4-cycle's far end) are bit tests in a
// bitmap of that list instead of four-way searches (hub_bits_for, executor.cuh). Items that
// test the same list at the same tau (the chunks of one update's level, its other plans)
// share one bitmap: an item joins the bitmap of its list if one is built or being built,
// else claims one of Ctx.hub_slots free ones (one bit a vertex; all zero while free), sets
// it from the list's entries alive at tau with the wanted label, and the last item to
// leave clears and frees it; with neither in HUB_BITS_TRIES tries it searches. Only where
// that list has at least HUB_BITS_MIN entries (a 27K-entry hub takes 7-8 dependent loads a
// search; building its bitmap is 27K independent ones) and the item's range at least
// 1 / HUB_BITS_DIV as many positions. The bitmaps live in the slab pool's top, above
// Ctx.bump_cap (the host carves them from the pool's free room). 0: never (the host carves
// none while no counting query that can use them is registered, or with hub_bitmaps 0:
// hub_slots 0).
#ifndef HUB_BITS_MIN
#define HUB_BITS_MIN 1024
#endif
#ifndef HUB_BITS_DIV
#define HUB_BITS_DIV 256
#endif
#ifndef HUB_BITS_TRIES
#define HUB_BITS_TRIES 8
#endif
// 1: a merge loads the other list's next 32 entries before it tests the current ones
// (merged windows take 2-4 rounds each on the 43M 4-cycle, and 1 took it from 221.7K to
// 249K updates/s: each round waits out a load's latency). Loading 64 ahead, or a window's
// first rounds beside its entries, gained nothing there (session16 call 2: 247-249K/s).
#ifndef MERGE_PREFETCH
#define MERGE_PREFETCH 1
#endif
// Tails (docs/delta-lists.md): a batch appends a new tail in the vertex's run, keeping its
// base, while the tail stays within the run and at most blen / TAIL_DIV entries; else it
// merges. 0: always merge (every version one run, as before tails). GpuEngine(tail_div=N),
// --gpu-tail-div and the gpu_tail_div setting set it.
#ifndef TAIL_DIV
#define TAIL_DIV 8
#endif
// Retired versions the collector examines a lane per round (32 * GC_ROUND a round, with one
// fence and one publication of the free rings' tails): at 32 a round, with two fences, the
// collector freed too slowly for a large insertion, and the updater waited for update slots
// that only the GC pointer's next advance frees (bench/results/scale-up/README.md).
#ifndef GC_ROUND
#define GC_ROUND 8
#endif
// Per-lane searches of a sorted run (lower_nbr, lower_nbr_both in mvg_read.cuh, and the
// short path's prepare search): 2 binary, 4 three pivots loaded together a step
// (search_steps.cuh: about half the dependent loads, about 1.5x the loads).
#ifndef SEARCH_WAYS
#define SEARCH_WAYS 4
#endif
// The executor's membership tests (has_edge in run_item), which thousands of lanes run at
// once, may gain less from the fewer round trips than they pay in loads (run_item spills
// 248/596 B at 4, 196/476 at 2; the kernel body 372/760 against 348/768): their own knob.
#ifndef EXEC_SEARCH_WAYS
#define EXEC_SEARCH_WAYS SEARCH_WAYS
#endif
#if (SEARCH_WAYS != 2 && SEARCH_WAYS != 4) || (EXEC_SEARCH_WAYS != 2 && EXEC_SEARCH_WAYS != 4)
#error "SEARCH_WAYS and EXEC_SEARCH_WAYS must be 2 or 4"
#endif
// 1: the collector also advances the GC pointer between two rounds of frees, not only
// before a run of them: a long run (a large batch's replaced versions) held it, and with it
// the update slots the updater waits for (the 43M triangle's updater waited 0.15-0.19 s of
// 0.62-0.68 s for slots whose updates were done, bench/results/gpu/session13).
#ifndef GC_EAGER
#define GC_EAGER 1
#endif
// J_COPY's publication of the segments a task completed (updater_jobs.cuh,
// publish_completed): a segment of at most PUBLISH_ALONE half edges from its first insertion
// on by the lane that completed it, all such lanes at once; 0: every segment by the whole
// warp, one after another (up to 32 a task of insertions). Session 40, call 1 (H200, 22
// oracle count rows, 4 turns): 8 with PUBLISH_LEAN 177.97 ms in total against 182.52 for 0
// alone, 8 alone 178.34; Q_7 insertion10 1.86 against 2.00 (bench/results/gpu/session40).
// PUBLISH_LEAN 1: J_SEGINFO marks the segments with no applied deletion after their first
// insertion (every segment of a batch of insertions) and gives each retired version its
// place in the batch's GC-queue range (its npush claim); the J_COPY lane that completes
// such a segment publishes it alone: head and its queue slot, no walk and no atomic.
// 0: the walk, and a gcpos atomic for the queue slot.
#ifndef PUBLISH_ALONE
#define PUBLISH_ALONE 8
#endif
#ifndef PUBLISH_LEAN
#define PUBLISH_LEAN 1
#endif
// Blocks of 256 threads per SM the persistent kernel is compiled for (__launch_bounds__):
// the register cap is 65536 / (256 * MIN_BLOCKS). nvcc 13.0 -Xptxas -v on sm_90: 3 -> 80
// registers, 356 B of spill stores and 800 B of loads; 2 -> 128 registers, 64 B and 296 B;
// 4 -> 64 registers, 820 B and 1,212 B. The host launches as many blocks as then fit.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3
#endif

#if QMAX > 32
#error "QMAX must be at most 32 (one lane per query slot in finalize_update)"
#endif
#if BATCH_CAP > 32768
#error "BATCH_CAP must be at most 32768 (15 bits of update index in a half edge)"
#endif
// A soft batch cap (form_batch, updater_batch.cuh): a batch closes at BATCH_SOFT records,
// unless every record waiting fits within BATCH_SOFT_ALL together with the batch's; then it
// takes them all, up to BATCH_CAP. So an apply's last records are not left to a batch of
// their own just past the cap (session 37, call 2: Q_1 deletion10's batches of 4,096,
// 8,192, 16,384 and then 228 updates, the last 0.13-0.16 ms of a 1.43 ms apply), while
// batches under a backlog stay at BATCH_SOFT (a batch_cap of 32,768 slowed the heavy rows,
// call 3). 0: off, BATCH_CAP alone.
#ifndef BATCH_SOFT
#define BATCH_SOFT 0
#endif
#ifndef BATCH_SOFT_ALL
#define BATCH_SOFT_ALL (BATCH_SOFT + BATCH_SOFT / 4)
#endif
#if BATCH_SOFT && (BATCH_SOFT > BATCH_CAP || BATCH_SOFT_ALL < BATCH_SOFT)
#error "need BATCH_SOFT <= BATCH_CAP and BATCH_SOFT_ALL >= BATCH_SOFT"
#endif

#define KMAX 16
#define NSTEP 29
#define NSMALL 5
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
#define PL_WEIGHT (PL_SYMGT + KMAX)  // matches each match stands for (plan.for_counting)
#define PL_FLIP (PL_WEIGHT + 1)  // 1: may run on the update's ends swapped (flip_ends)
#define PLAN_INTS (PL_FLIP + 1)

typedef unsigned long long u64;
typedef long long i64;

struct Entry { int nbr; int elab; int ct; int dt; };
// Fields in three 16-byte words, ordered so that a reader (find_version: the list, the
// lifetime, the chain) loads two of them: slab, len, blen, toff place the list (the base and
// tail runs, above); [ct_min, dt_max] is the lifetime, prev the older version; x is the
// vertex whose neighbour array it is (self-checks read it). The third word is the updater's
// and the collector's: cls, the run's size class; ndead bounds the version's dead entries
// (dt != INF) from above (a copy of a version with none skips the compaction scan); kept: 1
// once a successor shares the slab run (the collector then frees the id only). gpu/layout.py
// mirrors the order (VERSION_FIELDS; GpuEngine checks every field's offset).
struct __align__(16) Version {
    int slab; int len; int blen; int toff;
    int ct_min; int dt_max; int prev; int x;
    int cls; int ndead; int kept; int pad;
};

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
    int outcome;
    unsigned nonzero;  // bit q: done_counts holds query slot q's count of this update;
                       // the other slots counted 0 and their words are not written
    u64 t_taken, t_start, t_finish;
    i64 pad;
};

// clock_ping: a number the host changes to ask for the device's clock (gpu/device_clock.py).
struct HostCtl { u64 in_tail; u64 out_consumed; u64 done_consumed; u64 clock_ping; };
#define MIRROR_BITS 24  // in_tail: tail << MIRROR_BITS | records before it in in_mirror

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
    u64 gc_queue;         // GC: retired versions still waiting in the GC queue
    u64 donated;          // GC (snapshot of st): work items donated so far
    u64 slab_bump;        // GC (snapshot of st): slabs ever taken from the bump region
    u64 clock_pong_ns;    // w0: %globaltimer when it saw HostCtl.clock_ping change
    u64 clock_pong;       // w0: that clock_ping, written after clock_pong_ns
    u64 updater_sm;       // w0 at launch, RECORD_SM=1 only: 1 + block 0's SM (0: unknown)
    u64 pad;
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
    u64 donated;          // executors: items handed to waiting warps
    u64 clock_ping;       // w0: the last HostCtl.clock_ping answered
    u64 merged;           // executors: last levels counted by a merge (MERGE_LAST)
    u64 hub_bitmaps;      // executors: hub bitmaps built (each shared by the items of its list)
    // The job words, each alone on a 128-byte line (job_word at byte 256): every idle warp's
    // view polls job_word and job_cursor, and every task claim and finish is an atomic on
    // job_cursor or job_done, so none of them shares a line with the others or with the
    // counters above.
    u64 line_a[8];
    u64 job_word;         // w0: current job (seq << 40 | kind << 32 | tasks)
    u64 line_b[15];
    u64 job_cursor;       // w0 resets, every helper atomicAdds (seq << 40 | next task)
    u64 line_c[15];
    u64 job_done;         // w0 resets, helpers atomicAdd finished tasks
    u64 line_d[15];
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
    // w0 lane 0: batches and updates applied on the short path, eligible batches seen (for
    // SMALL_PROBE), and the cost models (updater_small.cuh).
    u64 small_batches, small_updates, small_probe;
    u64 model_update_ps, model_chunk_ps, model_bulk_ns, model_fixed_ns;
    u64 small_ns[NSMALL];  // w0 lane 0: %globaltimer ns per short-path step, summed
    // J_ALLOC and the short path: new versions that appended a tail in their vertex's run,
    // and those that took a new run (a merge, or a vertex's first list).
    u64 appends, new_runs;
    // w0 lane 0: %globaltimer ns per updater step, summed over batches (index: JobKind, or
    // STEP_* below for the steps between jobs).
    u64 step_ns[NSTEP];
    u64 check_count[32];     // CHECK=1: violations per CHK_* code
    i64 check_first[32][3];  // the first violation of each code: three values that locate it
    // JOB_TRACE=1: %globaltimer at the claims of the current job's first and last tasks
    // (their claimers store them), and per job kind ns summed over jobs (w0 lane 0): posting
    // -> first claim, first -> last claim, last claim -> the job's end.
    u64 trace_first, trace_last;
    u64 trace_ns[3][NSTEP];
    // JOB_TRACE=2 also: every task's time from its claim to its done count, as a histogram per
    // job kind and per runner (0: a helper, 1: an updater warp), bucket b holding tasks of
    // [2^b, 2^(b+1)) * 256 ns (b 0: under 512 ns; the last: the rest); and per job kind the
    // slowest task's time summed over jobs (trace_slowest: the current job's, by atomicMax).
    u64 trace_slowest;
    u64 task_slowest_ns[NSTEP];
    u64 task_hist[2][NSTEP][TASK_HIST];
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
    int ver_ring_n;
    int has_ins;  // DELETE_PATH: 1 once form_batch took an insertion (it and read_run set it)
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
    int seg_nins[HMAX], seg_oldlen[HMAX], seg_dead[HMAX];
    // The old entries a segment's new version merges, as positions [0, seg_oldlen): a base
    // run [0, seg_blen) at entry seg_off, then a tail run whose position p is entry
    // seg_off2 + p (a merge: the current version's base and tail; an append, seg_app = 1:
    // its tail alone, seg_blen = 0); and where the new run's entries go, seg_noff.
    i64 seg_off[HMAX], seg_off2[HMAX], seg_noff[HMAX];
    int seg_blen[HMAX], seg_app[HMAX];
    int seg_cls[HMAX], seg_chunk0[HMAX], seg_live[HMAX], seg_ins0[HMAX];
    int seg_crank[HMAX], seg_vrank[HMAX];
    int ins_y[HMAX], ins_i[HMAX], ins_seg[HMAX];  // applied insertions by segment, (y, i) order
    int qp[MAXQP];              // (slot << 16 | plan) live somewhere in the batch
    int outcome_shadow[BATCH_CAP];  // CHECK=1: batch_no << 4 | outcome, written beside outcome
    int seg_copied[HMAX];       // FUSE_COPY_PUBLISH: J_COPY's units of the segment done
#if PUBLISH_LEAN
    int seg_gcq[HMAX];          // the retired version's rank in the batch's GC-queue range
    int seg_lean[HMAX];         // 1: no applied deletion after first_ins (publish_segment)
#endif
#if READ_JOB
    // The long run form_batch left to J_READ (UpdShared's run_* fields, which only block 0
    // sees): run_n records from ring slot run_pos (of in_mirror when run_mirror) go to
    // rec[run_at...]; run_stop, the first of them that is not an update (atomicMin).
    int run_n, run_at, run_mirror, run_stop;
    u64 run_pos;
#endif
#if PRE_ENT
    i64 pre_ent[HMAX];          // the live entry of half edge h's pair in its array before the
                                //   batch, -1 if none (J_CLASSIFY writes, J_SEGEDIT reads)
#endif
};

// Every pointer and size the kernel needs; all fields 8 bytes so the host can fill it as
// a uint64 array (gpu/engine.py: CTX_FIELDS, same order).
struct Ctx {
    int* vlab; i64* ext; int* head; u64 maxv;
    int* vmark; int* vseg;
    Entry* entries; u64 nslabs;
    u64 bump_cap;     // the bump region ends here; [bump_cap, nslabs) holds the hub bitmaps
    Version* vers; u64 maxver;
    int* slab_free; int* ver_free;
    int* gcq; u64 gcq_cap;
    Upd* upd; u64* upd_count;
    Item* items; i64* item_free; i64* item_stamp;
    int* plans;
    unsigned* chunkmask; int* chunkoff; int* chunkseg;
    Batch* batch;
    State* st;
    InRec* in_ring; u64 in_cap; InRec* in_mirror;
    HostCtl* hctl; DevStatus* dstat;
    int* out; u64 out_cap;
    Done* done; u64* done_counts;
    int* slab_owner;
    u64* task_mark;   // CHECK=1: job seq of the last run of each task index
    unsigned* hub_bits; u64 hub_words;  // hub bitmap k: hub_words words at k * hub_words
    u64* hub_state; u64 hub_slots;      // bitmap k's state word (executor.cuh, HUB_*)
    u64* hub_key;                       // bitmap k's list: hub_key[2k] tau, [2k+1] vertex, label
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
