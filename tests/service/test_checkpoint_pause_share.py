"""Periodic checkpoints keep the engine's pause within ``checkpoint_max_pause_share``: after
an export of E seconds the next one waits E / share seconds, even when its interval is due,
and the postponement is counted."""

from __future__ import annotations

import asyncio
import time
import traceback
from pathlib import Path

import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.model import Graph, UpdateBatch
from dcsm.service.app import Service
from dcsm.service.errors import ConfigError
from dcsm.service.settings import Settings

EXPORT_S = 0.2


def one(u: int) -> UpdateBatch:
    return UpdateBatch.from_arrays(np.array([1], np.int8), np.array([u]), np.array([u + 1]))


async def checkpoint_times(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, share: float, run_s: float
) -> tuple[list[float], float]:
    """Monotonic end times of the periodic checkpoints taken while one update a few ms
    keeps every 0.05 s interval due, each export lasting EXPORT_S; and the postponements."""
    export = CpuEngine.export_graph
    ends: list[float] = []

    def slow_export(self: CpuEngine) -> Graph:
        if any(f.name == "warm_up" for f in traceback.extract_stack()):
            return export(self)  # the engine thread's warm-up, not a checkpoint
        time.sleep(EXPORT_S)  # what a graph of tens of millions of edges costs
        ends.append(time.monotonic())
        return export(self)

    monkeypatch.setattr(CpuEngine, "export_graph", slow_export)
    settings = Settings(
        backend="cpu",
        state_dir=str(tmp_path / "state"),
        checkpoint_interval_s=0.05,
        checkpoint_max_pause_share=share,
    )
    svc = Service(settings)
    await svc.start()
    try:
        t_end = time.monotonic() + run_s
        u = 0
        while time.monotonic() < t_end:
            await svc.submit_updates(one(u), wait=True)
            u += 2
            await asyncio.sleep(0.005)
    finally:
        postponed = svc.metrics.checkpoints_postponed_total._value.get()
        await svc.stop()
    return ends, postponed


async def test_checkpoints_wait_for_the_pause_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ends, postponed = await checkpoint_times(tmp_path, monkeypatch, share=0.25, run_s=2.0)
    gaps = np.diff(ends[:-1])  # the last export is the drain's final checkpoint: no bound
    assert len(gaps) >= 1, ends
    # Each gap: the export (EXPORT_S) after the wait of EXPORT_S / 0.25 since the last end.
    assert gaps.min() >= EXPORT_S / 0.25, gaps
    assert postponed >= len(gaps), (postponed, gaps)


async def test_share_one_takes_them_at_the_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ends, postponed = await checkpoint_times(tmp_path, monkeypatch, share=1.0, run_s=1.2)
    assert postponed == 0
    assert len(ends) >= 3, ends  # back to back: an export of 0.2 s, then the next is due


@pytest.mark.parametrize("share", [0.0, -0.1, 1.5])
def test_the_share_is_checked(share: float) -> None:
    with pytest.raises(ConfigError, match="checkpoint_max_pause_share"):
        Settings(checkpoint_max_pause_share=share)
