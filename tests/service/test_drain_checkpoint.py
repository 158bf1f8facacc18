"""SIGTERM while a periodic checkpoint is being written: the drain waits for that write, then
writes the final checkpoint; the two never race on the same files."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from dcsm.model import UpdateBatch
from dcsm.service import checkpoint
from dcsm.service.app import Service
from dcsm.service.settings import Settings


def one(u: int) -> UpdateBatch:
    return UpdateBatch.from_arrays(np.array([1], np.int8), np.array([u]), np.array([u + 1]))


async def test_the_drain_waits_for_a_checkpoint_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writing: list[int] = []
    savez = np.savez

    def slow_savez(fh, **arrays):  # type: ignore[no-untyped-def]
        writing.append(1)
        savez(fh, **arrays)
        time.sleep(0.5)  # what a big graph does by itself

    monkeypatch.setattr(checkpoint.np, "savez", slow_savez)
    state = tmp_path / "state"
    svc = Service(Settings(backend="cpu", state_dir=str(state), checkpoint_interval_s=0.1))
    await svc.start()
    await svc.submit_updates(one(1), wait=True)
    while not writing:  # the periodic checkpoint of seq 1 is being written
        await asyncio.sleep(0.005)
    await svc.submit_updates(one(5), wait=True)
    await svc.stop()  # what SIGTERM does: drain, then the final checkpoint (seq 2)
    assert checkpoint.Checkpoint.read(state / checkpoint.NEWEST).next_seq == 2
    assert checkpoint.Checkpoint.read(state / checkpoint.PREVIOUS).next_seq == 1
    assert not (state / "checkpoint.tmp").exists()
