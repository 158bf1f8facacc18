"""Host mirrors of the structures in gpu/layout.cuh (same field order, sizes, alignment).

Each dtype below must match its C struct byte for byte; ``GpuEngine`` checks them against
the sizes the kernel reports (``dcsm_sizes``) when it starts.
"""

from __future__ import annotations

import numpy as np

from dcsm.engine.plan import K, QueryPlan

from .loader import KernelConfig

INF_TS = 0x7FFFFFFF
REC_INSERT, REC_DELETE, REC_REGISTER, REC_UNREGISTER, REC_STOP = 1, 2, 3, 4, 5
ERRORS = {
    1: "slab pool exhausted: live data does not fit (raise pool_slabs: --gpu-pool-slabs)",
    2: "version pool exhausted (raise max_versions: --gpu-max-versions)",
    3: "one batch touches more neighbour-array chunks than MAXCHUNK",
}

IN_REC = np.dtype(
    [
        ("kind", np.int32), ("a", np.int32), ("b", np.int32), ("label", np.int32),
        ("a_label", np.int32), ("b_label", np.int32),
        ("ext_a", np.int64), ("ext_b", np.int64), ("arrival_ns", np.int64),
    ]
)  # fmt: skip
assert IN_REC.itemsize == 48

DONE = np.dtype(
    [
        ("tau", np.int64), ("outcome", np.int32), ("nonzero", np.uint32),
        ("t_taken", np.uint64), ("t_start", np.uint64), ("t_finish", np.uint64),
        ("pad", np.int64),
    ]
)  # fmt: skip
assert DONE.itemsize == 48

UPD = np.dtype(
    [
        ("a", np.int32), ("b", np.int32), ("elab", np.int32), ("op", np.int32),
        ("outcome", np.int32), ("pending", np.int32), ("tau", np.int64), ("done", np.int64),
        ("t_taken", np.uint64), ("t_start", np.uint64),
    ]
)  # fmt: skip
assert UPD.itemsize == 56

# struct Version, int32 fields in three 16-byte words: the list, the lifetime and chain (all
# a reader loads), then the updater's and the collector's. The version table is int32
# (maxver, len(VERSION_FIELDS)); gpu/mvg.py names its columns V_*.
VERSION_FIELDS = (
    "slab", "len", "blen", "toff",
    "ct_min", "dt_max", "prev", "x",
    "cls", "ndead", "kept", "pad",
)  # fmt: skip
VERSION = np.dtype([(f, np.int32) for f in VERSION_FIELDS])
assert VERSION.itemsize == 48

HOST_CTL = np.dtype([("in_tail", np.uint64), ("out_consumed", np.uint64),
                     ("done_consumed", np.uint64), ("clock_ping", np.uint64)])  # fmt: skip
DEV_STATUS = np.dtype(
    [
        ("in_consumed", np.uint64), ("gc_ptr", np.uint64), ("slabs_in_use", np.uint64),
        ("versions_in_use", np.uint64), ("clock_ns", np.uint64), ("running", np.uint64),
        ("error", np.uint64), ("completed", np.uint64), ("gc_freed", np.uint64),
        ("gc_queue", np.uint64), ("donated", np.uint64), ("slab_bump", np.uint64),
        ("clock_pong_ns", np.uint64), ("clock_pong", np.uint64), ("updater_sm", np.uint64),
        ("pad", np.uint64),
    ]
)  # fmt: skip

STATE_SCALARS = (
    "in_head", "next_tau", "item_reserve", "item_ticket", "out_reserve", "out_consumed",
    "done_consumed", "completed", "gc_ptr", "gcq_head", "gcq_tail", "slab_bump", "ver_bump",
    "ver_free_head", "ver_free_tail", "slabs_in_use", "versions_in_use", "stop", "hold",
    "batch_no", "donated", "clock_ping", "merged", "hub_bitmaps",
)  # fmt: skip
# The job words, each alone on a 128-byte line (layout.cuh, State).
STATE_JOB = (
    ("line_a", np.uint64, 8), ("job_word", np.uint64), ("line_b", np.uint64, 15),
    ("job_cursor", np.uint64), ("line_c", np.uint64, 15), ("job_done", np.uint64),
    ("line_d", np.uint64, 15),
)  # fmt: skip


def state_dtype(cfg: KernelConfig) -> np.dtype:
    fields: list[tuple] = [(name, np.uint64) for name in STATE_SCALARS]
    fields += STATE_JOB
    fields += [
        ("free_head", np.uint64, cfg.nclass),
        ("free_tail", np.uint64, cfg.nclass),
        ("q_from", np.int64, cfg.qmax),
        ("q_until", np.int64, cfg.qmax),
        ("q_count", np.int32, cfg.qmax),
        ("q_nplans", np.int32, cfg.qmax),
        ("phase_ns", np.uint64, len(UPDATER_PHASES)),
        ("batches", np.uint64),
        ("batched_updates", np.uint64),
        ("small_batches", np.uint64),
        ("small_updates", np.uint64),
        ("small_probe", np.uint64),
        ("model_update_ps", np.uint64),
        ("model_chunk_ps", np.uint64),
        ("model_bulk_ns", np.uint64),
        ("model_fixed_ns", np.uint64),
        ("small_ns", np.uint64, len(SMALL_STEPS)),
        ("appends", np.uint64),
        ("new_runs", np.uint64),
        ("step_ns", np.uint64, len(UPDATER_STEPS)),
        ("check_count", np.uint64, 32),
        ("check_first", np.int64, (32, 3)),
        ("trace_first", np.uint64),
        ("trace_last", np.uint64),
        ("trace_ns", np.uint64, (len(JOB_TRACE_PARTS), len(UPDATER_STEPS))),
        ("trace_slowest", np.uint64),
        ("task_slowest_ns", np.uint64, len(UPDATER_STEPS)),
        ("task_hist", np.uint64, (len(TASK_RUNNERS), len(UPDATER_STEPS), TASK_HIST)),
    ]
    return np.dtype(fields)


# Self-check codes (checks.cuh, enum CheckCode): what each violated invariant means.
CHECKS = {
    1: "a slab run was handed out while another version owned it (slab, owner, version)",
    2: "a recycled version id was still current (version, vertex, dt_max)",
    3: "the collector freed a run its version did not own (version, slab, owner)",
    4: "the collector freed a vertex's current version (version, vertex, dt_max)",
    5: "a version of another vertex on a vertex's version chain (tau, vertex, version)",
    6: "the version found for tau had ended before tau (tau, vertex, version)",
    7: "an edge was live in one endpoint's array only (tau, a, b)",
    8: "an applied deletion found no live entry (tau, vertex, neighbour)",
    9: "a head version was not sorted or held two live entries (version, vertex, index)",
    10: "a vertex's head version belonged to another vertex (tau0, vertex, version)",
    11: "an update's versions changed while it ran (tau, vertex, level)",
    12: "a half edge was put in another vertex's segment (tau, vertex, segment)",
    13: "an entry of a new version was never written (tau0, vertex, shape)",
    14: "a new version was not sorted by (neighbour, ct) (tau0, vertex, shape)",
    15: "a new version held two live entries of one neighbour (tau0, vertex, shape)",
    16: "the entry an applied deletion ends was already dead (tau, vertex, nbr + 1000 * index)",
    17: "a new version's length is not its live plus inserted entries (tau, vertex, length)",
    18: "an applied insertion has no entry in the new version (tau, vertex, neighbour)",
    19: "a job task had not finished when the job was seen complete (kind, task, tasks)",
    20: "a job task ran twice (kind, task, job seq)",
    21: "an outcome differs from a replay of the batch's records "
    "(tau, a, b + 1000 * count + 1e6 * chain length)",
    22: "an outcome read in a later job was not this batch's (job, record, batch seen)",
    23: "an outcome differs from its shadow copy (job, record, outcome + 10 * shadow)",
    24: "J_SEGEDIT saw another first insertion or insertion count than J_SEGINFO "
    "(tau0, vertex, first diff + 1000 * count diff)",
    25: "a merged last-level window's candidates differ from the binary searches' "
    "(tau, window position, merged mask ^ searched mask)",
    26: "the list lengths J_COUNT took from the batch's segments differ from the published "
    "heads' (tau, a's length difference, b's)",
    27: "a bit test in a hub bitmap differs from a search of the list (tau, neighbour, step)",
    28: "a segment's arrival count in a fused job passed its target (job, segment, count)",
    29: "the entry J_CLASSIFY found for an in-place deletion differs from a search of the "
    "current version (tau, vertex, neighbour)",
}

# Updater phases timed by the kernel (State.phase_ns), in order.
UPDATER_PHASES = ("form_batch", "classify_allocate", "copy", "publish_versions", "publish_items")

# JOB_TRACE=1 (State.trace_ns): a job's time from its posting to its first task's claim, from
# that to its last task's claim, and from that to its end; per job kind, the kinds named as
# UPDATER_STEPS names them, slot 0 being J_READ's.
JOB_TRACE_PARTS = ("notice", "handout", "tail")
# JOB_TRACE=2 (State.task_hist): tasks by who ran them and by time, bucket b holding tasks of
# [2^b, 2^(b+1)) * 256 ns (bucket 0 everything under 512 ns, the last everything above).
TASK_RUNNERS = ("helper", "updater")
TASK_HIST = 16

# Steps of the short path timed by the kernel (State.small_ns, updater_small.cuh), in order.
SMALL_STEPS = ("classify", "prepare", "merge", "publish", "items")

# Updater steps timed by the kernel (State.step_ns): slot k is JobKind k (updater_jobs.cuh),
# then the StepKind steps between jobs; slot 0 is unused.
UPDATER_STEPS = (
    "", "halves", "segcount", "segstart", "place", "order", "classify", "seginfo", "segedit",
    "alloc", "mask", "scan", "copy", "publish", "count", "items", "verify",
    "allocate", "gcq_wait", "live_plans", "item_room", "fence", "small", "input_wait",
    "input_slots", "input_read", "slots_running", "slots_gc", "input_run",
)  # fmt: skip
# The job kinds by name, the first slots of UPDATER_STEPS (JobKind, J_READ = 0 ...
# J_VERIFY; the rest are the steps between jobs). J_READ's step slot has no name: the job
# is timed as input_run.
JOB_NAMES = ("read", *UPDATER_STEPS[1 : UPDATER_STEPS.index("verify") + 1])


# Field order of struct Ctx (every field 8 bytes: a device pointer or a size).
CTX_FIELDS = (
    "vlab", "ext", "head", "maxv", "vmark", "vseg", "entries", "nslabs", "bump_cap", "vers",
    "maxver", "slab_free", "ver_free", "gcq", "gcq_cap", "upd", "upd_count", "items",
    "item_free", "item_stamp", "plans", "chunkmask", "chunkoff", "chunkseg", "batch", "st",
    "in_ring", "in_cap", "in_mirror", "hctl", "dstat", "out", "out_cap", "done", "done_counts",
    "slab_owner", "task_mark", "hub_bits", "hub_words", "hub_state", "hub_slots", "hub_key",
)  # fmt: skip

# int32 words of struct Item (a work item, 80 bytes).
ITEM_INTS = 20
ITEM = np.dtype((np.int32, ITEM_INTS))

# The input record that ends the kernel once everything before it has completed.
STOP_RECORD = np.array([(REC_STOP, 0, 0, 0, 0, 0, 0, 0, 0)], IN_REC)

# Plan blob (int32 per field), as the PL_* offsets in the kernel.
PLAN_INTS = 2 + 3 * K + 2 * K * K + 2 * K + 2


def plan_blob(plan: QueryPlan) -> np.ndarray:
    """int32 (P, PLAN_INTS): one row per plan, in the kernel's PL_* layout. The kernel
    honours ``flip`` in every mode: only count-mode queries get plans with it set
    (``orbit_plans``; the GPU engine does not write match images)."""
    P = plan.num_plans
    rows = np.concatenate(
        [
            np.full((P, 1), plan.num_vertices, np.int32),
            plan.start_elabel[:, None],
            plan.vlabel,
            plan.pos,
            plan.bn_cnt,
            plan.bn_pos.reshape(P, K * K),
            plan.bn_elabel.reshape(P, K * K),
            plan.sym_lt,
            plan.sym_gt,
            plan.weight[:, None],
            plan.flip[:, None],
        ],
        axis=1,
    ).astype(np.int32)
    assert rows.shape[1] == PLAN_INTS
    return np.ascontiguousarray(rows)


def mirrored_fields(mirrors: dict[str, np.dtype]) -> tuple[tuple[str, str], ...]:
    """Every named field of the structured mirrors, as (C struct, field) pairs."""
    return tuple((s, f) for s, dt in mirrors.items() if dt.names for f in dt.names)


def check_offsets(mirrors: dict[str, np.dtype], offsets: tuple[int, ...]) -> None:
    """Raise EngineError at the first field whose host offset is not the kernel's."""
    from dcsm.errors import EngineError

    for (struct, field), got in zip(mirrored_fields(mirrors), offsets, strict=True):
        want = mirrors[struct].fields[field][1]
        if got != want:
            raise EngineError(
                f"gpu/layout.py: {struct}.{field} is at byte {want}, the kernel's at {got}"
            )
