"""The engine thread: queued updates merge into one engine call up to the batch bound, never
across a control command; one event per command, in order; the fan-out's slots bound it."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.errors import EngineStopped
from dcsm.model import Pattern, UpdateBatch
from dcsm.service.engine_worker import EngineWorker
from dcsm.service.messages import (
    Applied,
    Apply,
    Barrier,
    BarrierReached,
    Event,
    Register,
    Registered,
)

TRI = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])


def apply(first: int, pairs: list[tuple[int, int]], origin: object = None) -> Apply:
    u, v = zip(*pairs, strict=True)
    batch = UpdateBatch.from_arrays(np.ones(len(pairs)), np.array(u), np.array(v), first_seq=first)
    return Apply(batch, 0.0, origin)  # type: ignore[arg-type]


async def drain(events: asyncio.Queue[Event], worker: EngineWorker, n: int) -> list[Event]:
    out = []
    for _ in range(n):
        out.append(await asyncio.wait_for(events.get(), 30))
        worker.event_done()
    return out


async def test_queued_updates_merge_up_to_the_bound_and_never_across_a_control() -> None:
    events: asyncio.Queue[Event] = asyncio.Queue()
    worker = EngineWorker("cpu", events, max_batch_updates=4)
    # Queued before the thread starts, so the thread finds them all waiting.
    worker.submit(Register(0, TRI, 0, False, False))
    worker.submit(apply(0, [(1, 2), (2, 3)], "a"))
    worker.submit(apply(2, [(1, 3)], "b"))
    worker.submit(apply(3, [(3, 4), (4, 5)], "c"))  # would exceed 4: next call
    worker.submit(Barrier())
    worker.submit(apply(5, [(3, 5)], "d"))
    await worker.start()
    got = await drain(events, worker, 5)
    await worker.stop()
    assert [type(e) for e in got] == [Registered, Applied, Applied, BarrierReached, Applied]
    first, second, last = (e for e in got if isinstance(e, Applied))
    assert [(s.start, s.stop, s.origin) for s in first.slices] == [(0, 2, "a"), (2, 3, "b")]
    assert first.batch.seq.tolist() == [0, 1, 2]
    assert len(first.result.deltas) == 6  # the triangle 1-2-3, in 3! embeddings
    assert [(s.start, s.stop, s.origin) for s in second.slices] == [(0, 2, "c")]
    assert len(last.result.deltas) == 6  # the triangle 3-4-5


async def test_launch_builds_the_engine_while_the_caller_goes_on() -> None:
    """The service takes its input lease while the engine loads: launch() returns at once,
    the engine gets ready without start(), and start() waits for that thread, not a second."""
    events: asyncio.Queue[Event] = asyncio.Queue()
    worker = EngineWorker("cpu", events)
    worker.launch()
    worker.launch()
    assert await asyncio.to_thread(worker.ready.wait, 60)
    await worker.start()
    assert [t.name for t in threading.enumerate()].count("dcsm-engine") == 1
    worker.submit(Register(0, TRI, 0, False, False))
    worker.submit(apply(0, [(1, 2), (2, 3), (1, 3)]))
    got = await drain(events, worker, 2)
    await worker.stop()
    assert isinstance(got[1], Applied) and len(got[1].result.deltas) == 6


async def test_the_engine_waits_for_the_fanout_when_it_falls_behind() -> None:
    events: asyncio.Queue[Event] = asyncio.Queue()
    worker = EngineWorker("cpu", events, max_batch_updates=1, max_events=2)
    await worker.start()
    for i in range(5):
        worker.submit(apply(i, [(10 + i, 20 + i)]))
    await asyncio.sleep(0.3)
    assert events.qsize() == 2  # two slots: the thread blocks on the third event
    got = await drain(events, worker, 5)
    assert [int(e.batch.seq[0]) for e in got if isinstance(e, Applied)] == [0, 1, 2, 3, 4]
    await worker.stop()


async def test_an_engine_that_stops_halts_the_worker_without_failing_updates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A GPU kernel stopped on a full pool raises EngineStopped: the worker must neither
    fail those updates back (Kafka ones would go to the dead letters and their offsets be
    committed) nor go on; it halts, and the service exits for a replay from its checkpoint."""
    calls = []

    def stopped(self: CpuEngine, batch: UpdateBatch) -> None:
        calls.append(len(batch))
        raise EngineStopped("GPU engine stopped: slab pool exhausted")

    events: asyncio.Queue[Event] = asyncio.Queue()
    worker = EngineWorker("cpu", events, max_batch_updates=2)
    await worker.start()
    worker.submit(Register(0, TRI, 0, False, False))
    assert isinstance((await drain(events, worker, 1))[0], Registered)
    monkeypatch.setattr(CpuEngine, "apply", stopped)
    worker.submit(apply(0, [(1, 2), (2, 3)], "a"))
    worker.submit(apply(2, [(1, 3)], "b"))  # never reaches the engine
    await asyncio.wait_for(worker.halted.wait(), 30)
    await worker.stop()
    assert calls == [2]
    assert isinstance(worker.error, EngineStopped)
    assert events.empty()  # no ApplyFailed: nothing is failed back or dead-lettered
