"""Reading the kernel's State for people (gpu/diagnostics.py), on a State record built on
the host: the stall report names the rings, the job and the pools; the updater profile
gives means per batch."""

from __future__ import annotations

import numpy as np

from dcsm.gpu import diagnostics
from dcsm.gpu import layout as L
from dcsm.gpu.loader import KernelConfig


def state() -> np.void:
    cfg = KernelConfig()
    st = np.zeros(1, L.state_dtype(cfg))[0]
    st["in_head"], st["next_tau"], st["completed"] = 40, 31, 30
    st["job_word"] = (7 << 40) | (3 << 32) | 12  # seq 7, job kind 3, 12 tasks
    st["slabs_in_use"], st["slab_bump"] = 100, 120
    st["free_head"][2], st["free_tail"][2] = 5, 9  # four free runs of class 2
    st["batches"], st["batched_updates"] = 4, 1000
    st["phase_ns"][0] = 8000  # 2 us a batch
    return st


def test_stall_report_names_where_things_are() -> None:
    text = diagnostics.stall_report(state(), in_tail=50, nslabs=1024, maxver=512, nclass=8)
    parts = [
        "in_head 40, in_tail 50",
        "next_tau 31",
        "completed 30",
        "job kind 3 (seq 7, 12 tasks",
        "slabs in use 100 of 1024 (bump 120, free runs by class {2: 4})",
        "of 512",
    ]
    for part in parts:
        assert part in text, part


def test_updater_profile_means_per_batch() -> None:
    prof = diagnostics.updater_profile(state())
    assert prof[f"{L.UPDATER_PHASES[0]}_us"] == 2.0
    assert prof["batches"] == 4 and prof["mean_batch"] == 250.0
    assert prof["small_batches"] == 0 and not any(k.startswith("step_") for k in prof)
