"""Reading the persistent kernel's State for people: where a stall is, and where the
graph-updater's time goes. Pure functions of one State record (a numpy structured scalar of
:func:`.layout.state_dtype`, read from the device by GpuEngine)."""

from __future__ import annotations

from typing import Any

from . import layout as L


def stall_report(st: Any, in_tail: int, nslabs: int, maxver: int, nclass: int) -> str:
    """The input ring, the updater's job in progress, the collector and the pools (free
    runs per size class) as one line; ``in_tail``: records the host has published."""
    job = int(st["job_word"])
    free = {
        c: int(st["free_tail"][c]) - int(st["free_head"][c])
        for c in range(nclass)
        if st["free_tail"][c] > st["free_head"][c]
    }
    return (
        f"in_head {int(st['in_head'])}, in_tail {in_tail}, next_tau "
        f"{int(st['next_tau'])}, completed {int(st['completed'])}, gc_ptr "
        f"{int(st['gc_ptr'])}, gc queue {int(st['gcq_tail']) - int(st['gcq_head'])}, "
        f"batch {int(st['batch_no'])}, job kind {(job >> 32) & 0xFF} (seq {job >> 40}, "
        f"{job & 0xFFFFFFFF} tasks, {int(st['job_done'])} done), slabs in use "
        f"{int(st['slabs_in_use'])} of {nslabs} (bump {int(st['slab_bump'])}, free "
        f"runs by class {free}), versions in use {int(st['versions_in_use'])} of "
        f"{maxver}, items {int(st['item_reserve'])} reserved / "
        f"{int(st['item_ticket'])} taken, out {int(st['out_reserve'])} reserved / "
        f"{int(st['out_consumed'])} consumed"
    )


def updater_profile(st: Any) -> dict[str, float]:
    """Mean microseconds per batch the updater spent in each phase and in each of its steps
    (jobs, and the steps between them; device clock), the batch count and the mean batch
    size; then the batches and updates the short path applied, its cost models' current
    values (us per update, per 32-entry chunk copied, per bulk batch of at most 32 updates)
    and its mean us per step and short batch; and the new versions by kind, both paths
    (``appends``: a tail in the vertex's run; ``new_runs``: a merge into a new run); and the
    last levels the executors counted by merging two lists (``merged_levels``, MERGE_LAST)
    and the hub bitmaps built, each shared by the items that test its list by bits
    (``hub_bitmaps``, HUB_BITS_MIN)."""
    n = max(1, int(st["batches"]))
    out = {
        f"{name}_us": float(st["phase_ns"][k]) / n / 1e3 for k, name in enumerate(L.UPDATER_PHASES)
    }
    steps = {
        f"step_{name}_us": float(st["step_ns"][k]) / n / 1e3
        for k, name in enumerate(L.UPDATER_STEPS)
        if name and st["step_ns"][k]
    }
    small = {
        "small_batches": int(st["small_batches"]),
        "small_updates": int(st["small_updates"]),
        "model_fixed_us": float(st["model_fixed_ns"]) / 1e3,
        "model_update_us": float(st["model_update_ps"]) / 1e6,
        "model_chunk_us": float(st["model_chunk_ps"]) / 1e6,
        "model_bulk_us": float(st["model_bulk_ns"]) / 1e3,
    }
    ns = max(1, small["small_batches"])
    small |= {
        f"small_{name}_us": float(st["small_ns"][k]) / ns / 1e3
        for k, name in enumerate(L.SMALL_STEPS)
    }
    # JOB_TRACE=1 builds only: each job's time split at its first and last task's claims.
    trace = {
        f"trace_{name}_{part}_us": float(st["trace_ns"][p][k]) / n / 1e3
        for k, name in enumerate(L.JOB_NAMES)
        for p, part in enumerate(L.JOB_TRACE_PARTS)
        if st["trace_ns"][:, k].any()
    }
    return (
        out
        | steps
        | trace
        | {"batches": int(st["batches"]), "mean_batch": float(st["batched_updates"]) / n}
        | small
        | {"appends": int(st["appends"]), "new_runs": int(st["new_runs"])}
        | {"merged_levels": int(st["merged"]), "hub_bitmaps": int(st["hub_bitmaps"])}
    )
