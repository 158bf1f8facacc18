"""A stop never hangs: each step after the drain (closing a Kafka client, the fan-out, ...) is
bounded, and one that hangs or fails is logged and left behind while the others still run."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from dcsm.service import app
from dcsm.service.app import Service
from dcsm.service.settings import Settings


async def test_a_hung_stop_step_is_logged_and_the_steps_after_it_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(app, "STOP_STEP_S", 0.3)
    svc = Service(Settings(backend="cpu", state_dir=str(tmp_path / "state")))
    await svc.start()
    real_stop = svc.fanout.stop

    async def hang() -> None:  # a client whose broker never answers its goodbye
        await real_stop()
        await asyncio.Event().wait()

    monkeypatch.setattr(svc.fanout, "stop", hang)
    closed: list[str] = []
    monkeypatch.setattr(svc.idempotency, "close", lambda: closed.append("idempotency"))
    caplog.set_level(logging.WARNING, "dcsm.service")
    t0 = time.monotonic()
    await asyncio.wait_for(svc.stop(), 10)
    assert time.monotonic() - t0 < 5
    assert "the fan-out did not stop within 0.3s; going on" in caplog.text
    assert closed == ["idempotency"], "the steps after the hung one ran"


async def test_a_failing_stop_step_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    async def fail() -> None:
        raise ConnectionError("the broker went away")

    await app._bounded("the kafka producer", fail())
    assert "the kafka producer stopped uncleanly: the broker went away" in caplog.text
