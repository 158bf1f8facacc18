"""A drain that runs out of time says why: every thread's and task's stack first, then the
error naming the step it was in, after them (a test's report and an operator's tail show
the end of the log), and the stop is unclean (no final checkpoint, exit code 1)."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest

from dcsm.service.app import Service
from dcsm.service.settings import Settings


async def test_a_drain_that_times_out_names_its_step_after_the_stacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    svc = Service(Settings(backend="cpu", state_dir=str(tmp_path / "state"), drain_timeout_s=0.3))
    await svc.start()

    async def stuck() -> None:
        svc._drain_step = "waiting for the test's step"
        await asyncio.sleep(3600)

    monkeypatch.setattr(svc, "_settle", stuck)
    handler = logging.StreamHandler(sys.stderr)
    logging.getLogger("dcsm").addHandler(handler)
    try:
        await svc.stop()
    finally:
        logging.getLogger("dcsm").removeHandler(handler)
    err = capfd.readouterr().err.splitlines()

    assert svc.fatal == "the drain timed out after 0s while waiting for the test's step"
    named = [i for i, line in enumerate(err) if "while waiting for the test's step" in line]
    assert len(named) == 1, err[-20:]
    assert "no final checkpoint" in err[named[0]]
    # faulthandler's dump of every thread, and the stacks of the loop's tasks, come before it
    threads = [i for i, line in enumerate(err) if line.startswith(("Current thread", "Thread 0x"))]
    tasks = [i for i, line in enumerate(err) if line.startswith("Stack for <Task")]
    assert threads and tasks, err[-40:]
    assert max(threads + tasks) < named[0]
