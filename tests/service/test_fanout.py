"""The fan-out: frames in both encodings with the same stable ids, origins settled in the
order of their slices after the frames are out, room released per batch."""

from __future__ import annotations

import asyncio
import json

import numpy as np

from dcsm.engine import BatchResult, Counts, Deltas
from dcsm.model import UpdateBatch
from dcsm.schemas import QuerySpec
from dcsm.service.fanout import Fanout
from dcsm.service.frames import rows
from dcsm.service.messages import Applied, Event, Slice
from dcsm.service.metrics import Metrics
from dcsm.service.queries import QueryCatalog
from dcsm.service.sequencer import Sequencer
from dcsm.service.subscribers import Subscriber

SPEC = QuerySpec.model_validate(
    {"name": "tri", "vertices": [{"id": i} for i in range(3)],
     "edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2}, {"u": 0, "v": 2}]}
)  # fmt: skip


class Origin:
    def __init__(self, log: list[str], name: str, seen_frames: Subscriber) -> None:
        self.log, self.name, self.sub = log, name, seen_frames

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        # Frames of the whole batch are out before any origin settles.
        self.log.append(f"{self.name}:{seq.tolist()}:{len(self.sub)}")

    async def fail(self, error: BaseException) -> None:
        raise AssertionError(error)


def batch_result(n: int) -> tuple[UpdateBatch, BatchResult]:
    batch = UpdateBatch.from_arrays(
        np.ones(n), np.arange(n), np.arange(n) + 100, first_seq=10, ts=np.full(n, 5.0)
    )
    match = np.array([[1, 2, 3, -1], [4, 5, 6, -1], [7, 8, 9, -1]], np.int64)
    deltas = Deltas(np.zeros(3, np.int32), np.array([1, 1, -1], np.int8),
                    np.array([10, 12, 12], np.int64), match)  # fmt: skip
    times = np.full(n, 6.0)
    return batch, BatchResult(np.zeros(n, np.int8), deltas, Counts.empty(), times, times)


async def test_frames_in_both_encodings_then_origins_in_order() -> None:
    catalog = QueryCatalog(100)
    st = catalog.reserve(SPEC, "embeddings", "json")
    st.live, st.from_seq = True, 0
    plain, batched = Subscriber(100), Subscriber(100, encoding="batch")
    st.subscribers |= {plain, batched}
    released: list[int] = []
    seq = Sequencer(lambda cmd: None, 10, 100)
    seq.release = released.append  # type: ignore[method-assign]
    events: asyncio.Queue[Event] = asyncio.Queue()
    fanout = Fanout(events, catalog, seq, Metrics(), None)
    log: list[str] = []
    batch, res = batch_result(4)
    slices = [Slice(0, 1, Origin(log, "a", plain)), Slice(1, 4, Origin(log, "b", plain))]
    await fanout.handle(Applied(batch, res, slices, np.ones(4)))
    assert log == ["a:[10]:3", "b:[11, 12, 13]:3"]
    assert released == [4] and fanout.processed_seq == 13
    per_delta = [json.loads(await plain.next() or "") for _ in range(3)]
    whole = json.loads(await batched.next() or "")
    assert whole["type"] == "deltas" and whole["seq"] == [10, 12, 12]
    assert [r | {"emitted_ts": 0} for r in rows(whole)] == [
        r | {"emitted_ts": 0} for r in per_delta
    ]
    assert per_delta[2]["match"] == [7, 8, 9] and per_delta[2]["sign"] == -1
    assert len({r["id"] for r in per_delta}) == 3
    assert st.stats.plus == 2 and st.stats.minus == 1 and st.stats.updates_seen == 4


async def test_ids_are_the_same_when_the_same_update_is_replayed() -> None:
    ids = []
    for _ in range(2):
        catalog = QueryCatalog(100)
        st = catalog.reserve(SPEC, "embeddings", "json")
        st.live, st.from_seq = True, 0
        sub = Subscriber(100)
        st.subscribers.add(sub)
        fanout = Fanout(
            asyncio.Queue(), catalog, Sequencer(lambda cmd: None, 10, 100), Metrics(), None
        )
        batch, res = batch_result(4)
        await fanout.handle(Applied(batch, res, [], np.ones(4)))
        frames = [json.loads(await sub.next() or "") for _ in range(3)]
        ids.append([(f["id"], f["arrival_ts"]) for f in frames])
    assert ids[0] == ids[1]


class FailingOrigin(Origin):
    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        raise OSError("no space left on device")  # e.g. the idempotency store's write


async def test_an_event_that_raises_stops_the_fanout() -> None:
    """Going on past a half-handled event would let a checkpoint pass rows never sent: the
    fan-out stops there and says why (the service halts on ``failed``), handling nothing
    after it, though it still gives the engine thread its event slots back."""
    catalog = QueryCatalog(100)
    st = catalog.reserve(SPEC, "embeddings", "json")
    st.live, st.from_seq = True, 0
    sub = Subscriber(100)
    st.subscribers.add(sub)
    seq = Sequencer(lambda cmd: None, 10, 100)
    events: asyncio.Queue[Event] = asyncio.Queue()
    done: list[int] = []
    fanout = Fanout(events, catalog, seq, Metrics(), None, event_done=lambda: done.append(1))
    batch, res = batch_result(4)
    log: list[str] = []
    events.put_nowait(Applied(batch, res, [Slice(0, 4, FailingOrigin(log, "a", sub))], np.ones(4)))
    events.put_nowait(Applied(batch, res, [Slice(0, 4, Origin(log, "b", sub))], np.ones(4)))
    await fanout.start()
    await asyncio.wait_for(fanout.failed.wait(), 5)
    await asyncio.sleep(0.05)
    assert fanout.failure == "fan-out failed on Applied: OSError('no space left on device')"
    assert log == [] and events.qsize() == 0, "the next event is taken, not handled"
    assert done == [1, 1] and fanout.processed_seq == 9
    await fanout.stop()
