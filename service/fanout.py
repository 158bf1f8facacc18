"""Fan-out: turns engine events, in engine order, into frames for every output.

For each applied batch it updates the counters and histograms (on arrays), encodes each
query's deltas or counts once per encoding somebody reads (``json``: a frame per delta;
``batch``: one frame for the whole batch, see :mod:`dcsm.service.frames`), sends them to
``dcsm.matches`` in the query's encoding and offers them to the query's websocket subscribers
in theirs, then *settles* each origin of the batch: an HTTP request gets its outcomes, a Kafka
poll dead-letters its rejected updates and marks its offsets done. Only then is the batch's
room in the sequencer released, so the admission bound covers the whole pipeline.

The fan-out is the single consumer of the events queue, so per-query order holds end to end.
A failure while handling one event stops it there (:attr:`Fanout.failed`; the events after
it are taken off the queue unhandled, so the engine thread is not left waiting for room) and
the service halts without a checkpoint: going on would let one pass rows never sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dcsm.errors import DcsmError
from dcsm.model import OP_INSERT, OUTCOME_NAMES, UpdateBatch

from .frames import (
    FRAME_ROWS,
    Encoding,
    count_batch_frame,
    count_frames,
    delta_batch_frame,
    delta_frames,
    end_frame,
    overflow_batch_frame,
    overflow_frames,
)
from .messages import (
    Applied,
    ApplyFailed,
    BackfillDone,
    BackfillPart,
    BackfillRunning,
    BarrierReached,
    ControlFailed,
    Event,
    Export,
    Exported,
    Register,
    Registered,
    Unregistered,
)
from .metrics import Metrics
from .outputs import KafkaOutput
from .queries import QueryCatalog, QueryState
from .replicas import Sharding
from .sequencer import Sequencer
from .subscribers import Subscriber
from .tasks import cancel_and_wait

log = logging.getLogger("dcsm.service.fanout")

PUBLISH_CHUNK_FRAMES = 1024
Encoder = Callable[[Encoding], tuple[list[str], list[str] | None]]


class FanoutFailed(DcsmError):
    """The fan-out stopped on an event that raised (:attr:`Fanout.failure` says which)."""


def _resolve(fut: asyncio.Future | None, value: Any = None) -> None:
    if fut is not None and not fut.done():
        fut.set_result(value)


def _reject(fut: asyncio.Future | None, error: BaseException) -> None:
    if fut is not None and not fut.done():
        fut.set_exception(error)


def _delta_encoder(
    name: str, sign: np.ndarray, seq: np.ndarray, match: np.ndarray, arrival: np.ndarray,
    now: float, backfill: bool,
) -> Encoder:  # fmt: skip
    def encode(enc: Encoding) -> tuple[list[str], list[str] | None]:
        if enc == "batch":
            return [delta_batch_frame(name, sign, seq, match, arrival, now, backfill)], None
        return delta_frames(name, sign, seq, match, arrival, now, backfill)

    return encode


class Fanout:
    def __init__(
        self,
        events: asyncio.Queue[Event],
        catalog: QueryCatalog,
        sequencer: Sequencer,
        metrics: Metrics,
        output: KafkaOutput | None,
        event_done: Callable[[], None] | None = None,
        sharding: Sharding | None = None,
    ) -> None:
        """``sharding``: this replica's share of the output (service/replicas.py); None:
        all of it."""
        self._events = events
        self._sharding = sharding or Sharding()
        self._event_done = event_done  # returns the engine its slot (EngineWorker.event_done)
        self._catalog = catalog
        self._sequencer = sequencer
        self._metrics = metrics
        self._output = output
        self._task: asyncio.Task | None = None
        # The last seq fanned out: its rows are emitted, but those of a query backfilling
        # beside the stream (state "backfilling") wait for the backfill to end.
        self.processed_seq = sequencer.next_seq - 1
        self._backfilling = 0  # queries whose backfill runs beside the stream
        self._idle = asyncio.Event()
        self._idle.set()
        self.failed = asyncio.Event()  # set when an event raised: no later one is handled
        self.failure = ""

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="dcsm-fanout")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None

    async def _run(self) -> None:
        while True:
            event = await self._events.get()
            try:
                await self.handle(event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Its frames may be half out and its origins unsettled: going on would let a
                # checkpoint pass them. Stop here; the service halts (``failed``) and its
                # restart replays from the last checkpoint, under the same ids.
                log.exception("fan-out failed on %s; it stops", type(event).__name__)
                self.failure = f"fan-out failed on {type(event).__name__}: {exc!r}"
                self.failed.set()
                break
            finally:
                if self._event_done is not None:
                    self._event_done()
            # Queue.get() returns at once while events wait: without a yield here a backlog
            # of events would hold the loop, starving ingest (the engine then idles) and the
            # HTTP API alike.
            await asyncio.sleep(0)
        while True:  # failed: nothing more is handled, but the engine gets its room back
            await self._events.get()
            if self._event_done is not None:
                self._event_done()

    async def handle(self, event: Event) -> None:
        """One event, completely (frames out, origins settled, replies resolved)."""
        if isinstance(event, Applied):
            await self._applied(event)
        elif isinstance(event, Registered):
            await self._registered(event)
        elif isinstance(event, BackfillPart):
            await self._backfill_part(event)
        elif isinstance(event, BackfillDone):
            await self._backfill_done(event)
        elif isinstance(event, Unregistered):
            self._unregistered(event)
        elif isinstance(event, BarrierReached):
            _resolve(event.cmd.reply)
        elif isinstance(event, Exported):
            if self._backfilling:
                # Its held deltas are not out yet: a checkpoint now would skip them.
                _reject(event.cmd.reply, BackfillRunning(f"{self._backfilling} backfills run"))
                return
            # The queries as the engine has them at the export's seq, taken now: later
            # events change the catalog before the checkpoint is written.
            _resolve(event.cmd.reply, (event, [st.persist() for st in self._catalog.live()]))
        elif isinstance(event, ApplyFailed):  # its updates are failed back to their origins
            for part in event.parts:
                if part.origin is not None:
                    await part.origin.fail(event.error)
            self._sequencer.release(sum(len(p.batch) for p in event.parts))
        elif isinstance(event, ControlFailed):
            cmd = event.cmd
            st = None if isinstance(cmd, Export) else self._catalog.by_qid(cmd.qid)
            if st is not None and isinstance(cmd, Register):
                self._catalog.remove(st)
            elif st is not None:
                # A deletion: done all the same (its name may be taken again already), and
                # whatever the engine still matches for it has no query to go to.
                self._forget(st)
            _reject(cmd.reply, event.error)

    # -- applied batches -----------------------------------------------------------------

    async def _applied(self, ev: Applied) -> None:
        batch = ev.batch
        # Shard mode updates: every replica matched everything; it emits its seqs' rows.
        res = self._sharding.keep_rows(ev.result)
        n = len(batch)
        if n:
            self._observe(ev)
        d = res.deltas
        over = dict((st.qid, rows) for st, rows in self._by_query(res.overflow.query))
        o = res.overflow
        for target, rows in self._by_query(d.query):
            match = d.match[rows, : target.num_vertices]
            orows = over.get(target.qid, rows[:0])
            seq = d.seq[rows]
            args = (d.sign[rows], seq, match, self._arrival(batch, seq))
            overflow = (o.seq[orows], o.count[orows])
            if target.backfill_job is not None:  # sent after its backfill
                target.held.append((self._emit_deltas, args, {"overflow": overflow}))
            else:
                await self._emit_deltas(target, *args, overflow=overflow)
        c = res.counts
        for target, rows in self._by_query(c.query):
            seq = c.seq[rows]
            args = (c.sign[rows], seq, c.count[rows], self._arrival(batch, seq))
            if target.backfill_job is not None:
                target.held.append((self._emit_counts, args, {}))
            else:
                await self._emit_counts(target, *args)
        for sl in ev.slices:
            if sl.origin is not None:
                await sl.origin.settle(
                    batch.seq[sl.start : sl.stop], res.outcome[sl.start : sl.stop]
                )
        if n:
            self.processed_seq = int(batch.seq[-1])
        self._sequencer.release(n)

    def _by_query(self, query: np.ndarray) -> list[tuple[QueryState, np.ndarray]]:
        """Row indices of each registered query in ``query`` (int32 (k,)), seq order kept."""
        if not len(query):
            return []
        order = np.argsort(query, kind="stable")
        qids, starts = np.unique(query[order], return_index=True)
        bounds = np.append(starts, len(order)).tolist()
        groups = []
        for i, qid in enumerate(qids.tolist()):
            target = self._catalog.by_qid(qid)
            if target is not None:
                groups.append((target, order[bounds[i] : bounds[i + 1]]))
        return groups

    def _observe(self, ev: Applied) -> None:
        """Outcome counters and response times (service receipt -> start of matching)."""
        batch, res = ev.batch, ev.result
        m = self._metrics
        key = (batch.op == OP_INSERT).astype(np.int64) * 8 + res.outcome
        vals, counts = np.unique(key, return_counts=True)
        for k, cnt in zip(vals.tolist(), counts.tolist(), strict=True):
            op_name = "insert" if k >= 8 else "delete"
            m.updates_total.labels(op_name, OUTCOME_NAMES[k % 8]).inc(cnt)
        waited = res.started - ev.received
        for st in self._catalog.live():
            if st.from_seq <= batch.seq[0]:
                k = len(batch)
                m.response_seconds.observe_many(st.name, waited)
            else:
                seen = batch.seq >= st.from_seq
                k = int(seen.sum())
                if k:
                    m.response_seconds.observe_many(st.name, waited[seen])
            st.stats.updates_seen += k

    @staticmethod
    def _arrival(batch: UpdateBatch, seq: np.ndarray) -> np.ndarray:
        return batch.ts[seq - batch.seq[0]]

    async def _emit_deltas(
        self,
        st: QueryState,
        sign: np.ndarray,
        seq: np.ndarray,
        match: np.ndarray,
        arrival: np.ndarray | None,
        backfill: bool = False,
        overflow: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """``arrival`` None: backfill (arrival is the registration time; not in the stats).
        ``overflow``: (seq int64 (j,), not shipped int64 (j,)) of the updates whose deltas
        the engine capped (each seq also has rows here): an overflow row each, after the
        deltas. Rows go out FRAME_ROWS at a time with a loop turn between: one update with
        a million matches must not hold the event loop (the API, /healthz) for seconds."""
        now = time.time()
        if arrival is None:
            arrival = np.full(len(seq), st.created_at)
        else:
            plus = int((sign > 0).sum())
            self._account(st, plus, len(sign) - plus, now - arrival)
        for i in range(0, len(seq), FRAME_ROWS):
            part = slice(i, i + FRAME_ROWS)
            args = (st.name, sign[part], seq[part], match[part], arrival[part], now, backfill)
            await self._publish(st, _delta_encoder(*args), st.subscribers, len(seq[part]))
            if i + FRAME_ROWS < len(seq):
                await asyncio.sleep(0)
        oseq, onot = overflow if overflow is not None else (seq[:0], seq[:0])
        if len(oseq):
            st.stats.not_shipped += int(onot.sum())
            # seq is sorted (engine order): the rows of each capped update are one run.
            shipped = np.searchsorted(seq, oseq, "right") - np.searchsorted(seq, oseq, "left")
            at = np.searchsorted(seq, oseq)
            osign, oarr = sign[at], arrival[at]

            def encode_over(enc: Encoding) -> tuple[list[str], list[str] | None]:
                if enc == "batch":
                    return [
                        overflow_batch_frame(
                            st.name, osign, oseq, shipped, onot, oarr, now, backfill
                        )  # fmt: skip
                    ], None
                return overflow_frames(st.name, osign, oseq, shipped, onot, oarr, now, backfill)

            await self._publish(st, encode_over, st.subscribers, len(oseq))
        if st.count_subscribers and not backfill:
            # An embedding-mode query watched through /counts: derive per-update counts,
            # exact (what the cap left out included).
            useq, first, cnt = np.unique(seq, return_index=True, return_counts=True)
            if len(oseq):
                cnt[np.searchsorted(useq, oseq)] += onot
            csign, carr = sign[first], arrival[first]

            def encode_counts(enc: Encoding) -> tuple[list[str], list[str] | None]:
                if enc == "batch":
                    return [count_batch_frame(st.name, csign, useq, cnt, carr, now)], None
                return count_frames(st.name, csign, useq, cnt, carr, now)

            self._offer(encode_counts, st.count_subscribers, len(useq))

    async def _emit_counts(
        self,
        st: QueryState,
        sign: np.ndarray,
        seq: np.ndarray,
        count: np.ndarray,
        arrival: np.ndarray | None,
        backfill: bool = False,
    ) -> None:
        """``arrival`` None: backfill (arrival is the registration time; not in the stats)."""
        now = time.time()
        if arrival is None:
            arrival = np.full(len(seq), st.created_at)
        else:
            plus = int(count[sign > 0].sum())
            self._account(st, plus, int(count.sum()) - plus, now - arrival)

        def encode(enc: Encoding) -> tuple[list[str], list[str] | None]:
            if enc == "batch":
                return [count_batch_frame(st.name, sign, seq, count, arrival, now, backfill)], None
            return count_frames(st.name, sign, seq, count, arrival, now, backfill)

        await self._publish(st, encode, st.count_subscribers, len(seq))

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

    async def _publish(
        self, st: QueryState, encode: Encoder, subs: set[Subscriber], rows: int
    ) -> None:
        """To Kafka in the query's encoding, then to the query's own-kind subscribers and the
        unclaimed pending queue in theirs (each encoding built once, only if read; ``rows``:
        how many rows ``encode`` covers)."""
        pending = {st.pending} if st.pending is not None else set()
        cache = self._offer(encode, subs | pending, rows)
        if self._output is not None:
            texts, ids = cache.get(st.encoding) or encode(st.encoding)
            for i in range(0, len(texts), PUBLISH_CHUNK_FRAMES):
                part_ids = ids[i : i + PUBLISH_CHUNK_FRAMES] if ids is not None else None
                await self._output.send_frames(
                    st.name, texts[i : i + PUBLISH_CHUNK_FRAMES], part_ids
                )

    @staticmethod
    def _offer(
        encode: Encoder, subs: set[Subscriber], rows: int
    ) -> dict[Encoding, tuple[list[str], list[str] | None]]:
        """Offer to each subscriber; one that is full (a slow client) only counts the drop:
        no frame is built for it, so it costs the fan-out nothing per frame."""
        cache: dict[Encoding, tuple[list[str], list[str] | None]] = {}
        for sub in subs:
            if sub.room == 0 and sub.encoding not in cache:
                sub.drop(1 if sub.encoding == "batch" else rows)
                continue
            frames = cache.get(sub.encoding)
            if frames is None:
                frames = cache[sub.encoding] = encode(sub.encoding)
            sub.offer_many(frames[0])
        return cache

    # -- control events ------------------------------------------------------------------

    async def _registered(self, ev: Registered) -> None:
        cmd = ev.cmd
        st = self._catalog.by_qid(cmd.qid)
        if st is None:
            _resolve(cmd.reply, 0)
            return
        st.live = True
        if ev.backfill_job is not None:  # running beside the stream: BackfillDone follows
            st.backfill_job = ev.backfill_job
            self._backfilling += 1
            self._idle.clear()
            return
        n_backfill = await self._emit_backfill(st, cmd, ev.backfill_count, ev.backfill_matches)
        # A remote query (another replica matches it): this one does not know its backfill.
        _resolve(cmd.reply, None if cmd.remote else n_backfill)

    async def _backfill_part(self, ev: BackfillPart) -> None:
        """Rows of a backfill still running beside the stream: out now, ahead of the live
        deltas held for it."""
        cmd = ev.cmd
        st = self._catalog.by_qid(cmd.qid)
        if st is None or st.backfill_job is None or not self._sharding.owns_seq(cmd.from_seq):
            return
        await self._send_backfill_rows(st, cmd, ev.matches)

    async def _send_backfill_rows(
        self,
        st: QueryState,
        cmd: Register,
        rows: np.ndarray,
        overflow: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """Backfill rows as + deltas at ``cmd.from_seq`` (and an overflow row, if given)."""
        k = len(rows)
        await self._emit_deltas(
            st, np.ones(k, np.int8), np.full(k, cmd.from_seq, np.int64), rows, None,
            backfill=True, overflow=overflow,
        )  # fmt: skip

    async def _backfill_done(self, ev: BackfillDone) -> None:
        """The backfill first, then the live deltas held meanwhile, in seq order."""
        cmd = ev.cmd
        st = self._catalog.by_qid(cmd.qid)
        if st is None or st.backfill_job is None:
            _resolve(cmd.reply, None)
            return
        n = 0
        if ev.error is None:
            n = await self._emit_backfill(st, cmd, ev.count, ev.matches)
            log.info("backfill of %s: %d in %.2fs", st.name, n, ev.seconds)
        held, st.held, st.backfill_job = st.held, [], None
        for emit, args, kw in held:
            await emit(st, *args, **kw)
        self._backfilling -= 1
        if not self._backfilling:
            self._idle.set()
        if ev.error is not None:
            _reject(cmd.reply, ev.error)
        else:
            _resolve(cmd.reply, n)

    async def backfills_done(self) -> None:
        """Wait until no backfill runs beside the stream (what a final checkpoint needs)."""
        await self._idle.wait()

    async def _emit_backfill(
        self, st: QueryState, cmd: Register, count: int | None, matches: np.ndarray | None
    ) -> int:
        """Send a backfill (all of it from this replica, or none in shard mode updates
        where another owns ``from_seq``); its size."""
        emit = self._sharding.owns_seq(cmd.from_seq)
        at = np.array([cmd.from_seq], np.int64)
        # ``count`` is the whole backfill where given (its rows may stop at the cap).
        n = int(count) if count is not None else len(matches) if matches is not None else 0
        if emit and matches is not None and n:
            if st.max_deltas is None:  # every row; any before these went out as parts
                cap, over = len(matches), None
            else:
                cap = min(n, st.max_deltas)
                over = (at, np.array([n - cap], np.int64)) if cap < n else None
            if cap or over is not None:
                await self._send_backfill_rows(st, cmd, matches[:cap], over)
        elif emit and matches is None and n:
            await self._emit_counts(
                st, np.ones(1, np.int8), at, np.array([n], np.int64), None, backfill=True
            )
        st.stats.backfill = n
        return n

    def _unregistered(self, ev: Unregistered) -> None:
        cmd = ev.cmd
        st = self._catalog.by_qid(cmd.qid)
        if st is None:
            _resolve(cmd.reply, {})
            return
        final = st.stats.as_dict()
        self._forget(st)
        _resolve(cmd.reply, final)

    def _forget(self, st: QueryState) -> None:
        """A deleted query out of the catalog, its subscribers told, its metrics gone."""
        for sub in st.all_subscribers():
            sub.close(end_frame("query deleted"))
        self._catalog.remove(st)
        self._metrics.forget_query(st.name)
