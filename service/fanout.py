"""Fan-out: turns engine events, in engine order, into frames for every output.

For each applied batch it updates the counters and histograms, encodes each query's deltas
(or counts) once, sends them to ``dcsm.matches`` and offers them to the query's websocket
subscribers, then *settles* each origin of the batch: an HTTP request gets its outcomes, a
Kafka fetch dead-letters its rejected updates and marks its offsets done. Only then is the
batch's room in the sequencer released, so the admission bound covers the whole pipeline.

The fan-out is the single consumer of the events queue, so per-query order holds end to end.
A failure while handling one event is logged and does not stop the loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Protocol

import numpy as np

from dcsm.model import OP_INSERT, OUTCOME_NAMES

from .codec import count_frames, delta_frames, end_frame
from .engine_worker import (
    Applied,
    Barrier,
    Done,
    Exported,
    Failed,
    Register,
    Registered,
    Unregister,
)
from .metrics import Metrics
from .outputs import KafkaOutput
from .queries import QueryCatalog, QueryState
from .sequencer import Sequencer

log = logging.getLogger("dcsm.service.fanout")

YIELD_EVERY_FRAMES = 4096
PUBLISH_CHUNK_FRAMES = 1024


class Origin(Protocol):
    """Where a slice of an applied batch came from."""

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        """Called once the slice's deltas are emitted: seq int64 (n,), outcome int8 (n,)."""

    async def fail(self, error: BaseException) -> None:
        """Called instead of settle when the engine raised on the batch."""


class Reply:
    """Origin of an HTTP request: resolves its future with (seq, outcome)."""

    def __init__(self, fut: asyncio.Future) -> None:
        self.fut = fut

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        if not self.fut.done():
            self.fut.set_result((seq, outcome))

    async def fail(self, error: BaseException) -> None:
        if not self.fut.done():
            self.fut.set_exception(error)


def _resolve(fut: Any, value: Any = None, error: BaseException | None = None) -> None:
    if fut is None or fut.done():
        return
    if error is not None:
        fut.set_exception(error)
    else:
        fut.set_result(value)


class Fanout:
    def __init__(
        self,
        events: asyncio.Queue,
        catalog: QueryCatalog,
        sequencer: Sequencer,
        metrics: Metrics,
        output: KafkaOutput | None,
        event_done: Any = None,
    ) -> None:
        self._events = events
        self._event_done = event_done  # returns the engine its slot (EngineWorker.event_done)
        self._catalog = catalog
        self._sequencer = sequencer
        self._metrics = metrics
        self._output = output
        self._task: asyncio.Task | None = None
        self.processed_seq = sequencer.next_seq - 1  # last seq whose output is emitted

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="dcsm-fanout")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        while True:
            event = await self._events.get()
            try:
                await self._handle(event)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("fan-out failed on %s; continuing", type(event).__name__)
            finally:
                if self._event_done is not None:
                    self._event_done()

    async def _handle(self, event: Any) -> None:
        if isinstance(event, Applied):
            await self._applied(event)
        elif isinstance(event, Registered):
            await self._registered(event)
        elif isinstance(event, Done):
            if isinstance(event.cmd, Unregister):
                self._unregistered(event.cmd)
            elif isinstance(event.cmd, Barrier):
                _resolve(event.cmd.reply)
        elif isinstance(event, Exported):
            _resolve(event.cmd.reply, (event.graph, event.next_seq))
        elif isinstance(event, Failed):
            if isinstance(event.cmd, list):  # a failed apply: its updates are lost
                n = 0
                for cmd in event.cmd:
                    n += len(cmd.batch)
                    if cmd.origin is not None:
                        await cmd.origin.fail(event.error)
                self._sequencer.release(n)
                return
            if isinstance(event.cmd, Register):
                st = self._catalog.by_qid(event.cmd.qid)
                if st is not None:
                    self._catalog.remove(st)
            _resolve(getattr(event.cmd, "reply", None), error=event.error)

    # -- applied batches -----------------------------------------------------------------

    async def _applied(self, ev: Applied) -> None:
        batch, res = ev.batch, ev.result
        n = len(batch)
        m = self._metrics
        if n:
            self._count_outcomes(batch.op, res.outcome)
            waited = res.started - batch.ts
            for st in self._catalog.live():
                seen = batch.seq >= st.from_seq
                k = int(seen.sum())
                if k:
                    st.stats.updates_seen += k
                    m.response_seconds.observe_many(st.name, waited[seen] if k < n else waited)
        sent = 0
        d = res.deltas
        if len(d):
            order = np.argsort(d.query, kind="stable")  # group by query, seq order kept
            qids, starts = np.unique(d.query[order], return_index=True)
            bounds = np.append(starts, len(order))
            for qid, a, b in zip(
                qids.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(), strict=True
            ):
                target = self._catalog.by_qid(qid)
                if target is not None:
                    rows = order[a:b]
                    width = target.num_vertices
                    sent += await self._emit_deltas(
                        target, d.sign[rows], d.seq[rows], d.match[rows, :width], batch
                    )
                if sent >= YIELD_EVERY_FRAMES:
                    sent = 0
                    await asyncio.sleep(0)
        c = res.counts
        if len(c):
            for qid in np.unique(c.query).tolist():
                target = self._catalog.by_qid(qid)
                rows = np.flatnonzero(c.query == qid)
                if target is not None:
                    await self._emit_counts(target, c.sign[rows], c.seq[rows], c.count[rows], batch)
        for start, stop, origin in ev.origins:
            if origin is not None:
                await origin.settle(batch.seq[start:stop], res.outcome[start:stop])
        if n:
            self.processed_seq = int(batch.seq[-1])
        self._sequencer.release(n)

    def _count_outcomes(self, op: np.ndarray, outcome: np.ndarray) -> None:
        key = (op == OP_INSERT).astype(np.int64) * 8 + outcome
        vals, counts = np.unique(key, return_counts=True)
        for k, cnt in zip(vals.tolist(), counts.tolist(), strict=True):
            op_name = "insert" if k >= 8 else "delete"
            self._metrics.updates_total.labels(op_name, OUTCOME_NAMES[k % 8]).inc(cnt)

    def _arrival(self, batch: Any, seq: np.ndarray) -> np.ndarray:
        return batch.ts[np.searchsorted(batch.seq, seq)]

    async def _emit_deltas(
        self, st: QueryState, sign: np.ndarray, seq: np.ndarray, match: np.ndarray, batch: Any
    ) -> int:
        now = time.time()
        arrival = self._arrival(batch, seq)
        frames = delta_frames(st.name, sign, seq, match, arrival, now)
        plus = int((sign > 0).sum())
        self._account(st, plus, len(sign) - plus, now - arrival)
        await self._publish(st, frames, st.subscribers)
        if st.count_subscribers:
            # An embedding-mode query watched through /counts: derive per-update counts.
            useq, first, cnt = np.unique(seq, return_index=True, return_counts=True)
            cf = count_frames(st.name, sign[first], useq, cnt, arrival[first], now)
            for sub in st.count_subscribers:
                sub.offer_many(cf)
        return len(frames)

    async def _emit_counts(
        self, st: QueryState, sign: np.ndarray, seq: np.ndarray, count: np.ndarray, batch: Any
    ) -> None:
        now = time.time()
        arrival = self._arrival(batch, seq)
        frames = count_frames(st.name, sign, seq, count, arrival, now)
        plus = int(count[sign > 0].sum())
        self._account(st, plus, int(count.sum()) - plus, now - arrival)
        await self._publish(st, frames, st.count_subscribers)

    def _account(self, st: QueryState, plus: int, minus: int, latency: np.ndarray) -> None:
        st.stats.plus += plus
        st.stats.minus += minus
        st.stats.record_latency(latency)
        m = self._metrics
        if plus:
            m.deltas_total.labels(st.name, "+").inc(plus)
        if minus:
            m.deltas_total.labels(st.name, "-").inc(minus)
        m.match_latency_seconds.observe_many(st.name, latency)

    async def _publish(self, st: QueryState, frames: list[str], subs: set) -> None:
        """To Kafka, the query's own-kind subscribers, and the unclaimed pending queue.

        Large bursts go out in chunks with a yield between them, so websocket pumps send
        while the fan-out works instead of finding the whole burst queued at once. The
        subscriber list is taken once: one joining meanwhile starts with the next batch."""
        targets = [*subs, *([st.pending] if st.pending is not None else [])]
        for i in range(0, len(frames), PUBLISH_CHUNK_FRAMES):
            part = frames[i : i + PUBLISH_CHUNK_FRAMES]
            if self._output is not None:
                await self._output.send_frames(st.name, part)
            for sub in targets:
                sub.offer_many(part)
            if len(frames) > PUBLISH_CHUNK_FRAMES:
                await asyncio.sleep(0)

    # -- control events ------------------------------------------------------------------

    async def _registered(self, ev: Registered) -> None:
        cmd = ev.cmd
        st = self._catalog.by_qid(cmd.qid)
        if st is None:
            _resolve(cmd.reply, 0)
            return
        st.live = True
        now = time.time()
        n_backfill = 0
        if ev.backfill_matches is not None and len(ev.backfill_matches):
            k = len(ev.backfill_matches)
            frames = delta_frames(
                st.name, np.ones(k, np.int8), np.full(k, cmd.from_seq, np.int64),
                ev.backfill_matches, np.full(k, st.created_at), now, backfill=True,
            )  # fmt: skip
            n_backfill = k
            await self._publish(st, frames, st.subscribers)
        elif ev.backfill_count:
            n_backfill = ev.backfill_count
            frames = count_frames(
                st.name, np.ones(1, np.int8), np.array([cmd.from_seq]), np.array([n_backfill]),
                np.array([st.created_at]), now, backfill=True,
            )  # fmt: skip
            await self._publish(st, frames, st.count_subscribers)
        st.stats.backfill = n_backfill
        _resolve(cmd.reply, n_backfill)

    def _unregistered(self, cmd: Unregister) -> None:
        st = self._catalog.by_qid(cmd.qid)
        if st is None:
            _resolve(cmd.reply, {})
            return
        final = st.stats.as_dict()
        for sub in st.all_subscribers():
            sub.close(end_frame("query deleted"))
        self._catalog.remove(st)
        self._metrics.forget_query(st.name)
        _resolve(cmd.reply, final)
