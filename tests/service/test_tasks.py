"""service.tasks.cancel_and_wait: a background task stops even when it swallows a cancel()."""

from __future__ import annotations

import asyncio
import sys

import pytest

from dcsm.service.tasks import cancel_and_wait


async def _pinger(inner: asyncio.Queue[asyncio.Future[int]], rounds: list[int]) -> None:
    """A watchdog loop around asyncio.wait_for, as Service._watch_kafka pings the broker."""
    loop = asyncio.get_running_loop()
    while True:
        fut: asyncio.Future[int] = loop.create_future()
        inner.put_nowait(fut)
        rounds.append(await asyncio.wait_for(fut, 10))


async def _cancel_as_the_ping_answers(
    task: asyncio.Task, inner: asyncio.Queue[asyncio.Future[int]]
) -> None:
    """The cancel() lands in the same loop pass as the ping's answer."""
    fut = await inner.get()
    fut.set_result(1)
    task.cancel()


async def test_a_cancel_swallowed_by_wait_for_is_repeated() -> None:
    inner: asyncio.Queue[asyncio.Future[int]] = asyncio.Queue()
    rounds: list[int] = []
    task = asyncio.create_task(_pinger(inner, rounds), name="pinger")
    await _cancel_as_the_ping_answers(task, inner)
    # Python 3.11's wait_for returns the answer and the cancel is lost: the loop goes on.
    await asyncio.sleep(0.05)
    if sys.version_info < (3, 12):
        assert not task.done() and rounds == [1], "the race this guards against"
    await asyncio.wait_for(cancel_and_wait([task], again_s=0.05), 5)
    assert task.cancelled()


async def test_returns_at_once_for_tasks_that_end_and_logs_their_errors(caplog) -> None:
    async def fails() -> None:
        raise RuntimeError("boom")

    async def waits() -> None:
        await asyncio.Event().wait()

    failed = asyncio.create_task(fails())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(waits())
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await cancel_and_wait([failed, waiting], again_s=5)
    assert loop.time() - t0 < 1, "one cancel() was enough: no second round"
    assert waiting.cancelled() and isinstance(failed.exception(), RuntimeError)
    assert any("had failed: RuntimeError('boom')" in r.getMessage() for r in caplog.records)


async def test_the_callers_own_cancellation_propagates() -> None:
    stubborn_now = True

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                if not stubborn_now:
                    raise

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    stopper = asyncio.create_task(cancel_and_wait([task], again_s=0.05))
    await asyncio.sleep(0.2)
    stopper.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopper
    assert not task.done()
    stubborn_now = False
    await cancel_and_wait([task])
    assert task.cancelled()
