"""Taking checkpoints while the service runs: every ``interval_s`` or ``interval_updates``
(whichever comes first, and only when something changed), and on demand (the drain's final
one). The export pauses the data path, and its cost grows with the graph, so a periodic
checkpoint also waits until the last export is at most ``max_pause_share`` of the time since
that checkpoint (an export of 1 s at the default 0.05: 20 s apart at the least), whatever the
intervals say: the stream keeps its rate on a large graph, and a crash replays more.

One checkpoint, in order: the sequencer places an export at the next seq; the engine thread
exports the graph there (the only pause of the data path) and the fan-out adds the queries as
they stand at that seq; the outputs are flushed, so every frame before that seq is
acknowledged; another thread writes the file (:meth:`Checkpoint.save`); only then are the
input offsets it covers committed to Kafka. :attr:`lock` is held throughout: whoever must not
overlap a checkpoint (the drain) takes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .checkpoint import Checkpoint
from .durable import QueryLog
from .ingest import KafkaIngest
from .messages import BackfillRunning, Exported
from .metrics import Metrics
from .outputs import KafkaOutput
from .sequencer import Sequencer

log = logging.getLogger("dcsm.service.checkpoint")


class Checkpointer:
    def __init__(
        self,
        state_dir: Path,
        sequencer: Sequencer,
        output: KafkaOutput | None,
        ingest: KafkaIngest | None,
        metrics: Metrics,
        query_log: QueryLog | None,
        interval_s: float,
        interval_updates: int,
        latest: Checkpoint | None,
        log_entries: int,
        placement: dict[str, Any] | None = None,
        backfills_done: Callable[[], Awaitable[None]] | None = None,
        max_pause_share: float = 1.0,
    ) -> None:
        """``placement``: what the queries' owners are decided for (Sharding.placement);
        ``backfills_done``: waits while a backfill beside the stream holds frames back
        (Fanout.backfills_done): periodic checkpoints wait for it; ``max_pause_share``:
        see the module docstring (1: no bound)."""
        self._state_dir = state_dir
        self._sequencer = sequencer
        self._output = output
        self._ingest = ingest
        self._metrics = metrics
        self._query_log = query_log
        self._interval_s = interval_s
        self._interval_updates = interval_updates
        self.latest = latest  # the newest durable checkpoint (restored or written)
        self.lock = asyncio.Lock()
        self._last = (time.monotonic(), sequencer.next_seq, log_entries)
        self._placement = placement
        self._backfills_done = backfills_done
        self._max_pause_share = max_pause_share
        self._export_s = 0.0  # the last export's pause of the engine
        self._postponed = False  # a due checkpoint is waiting for _min_gap_s()

    def restart_clock(self) -> None:
        """The next periodic checkpoint is due an interval from now (called at start)."""
        self._last = (time.monotonic(), *self._last[1:])

    async def run(self) -> None:
        """The periodic checkpoints (a task; a failure is counted, logged and retried)."""
        while True:
            await asyncio.sleep(min(0.1, self._interval_s))
            t, seq, entries = self._last
            grown = self._sequencer.next_seq - seq
            changed = grown > 0 or len(self._query_log or ()) != entries
            since = time.monotonic() - t
            if changed and (since >= self._interval_s or grown >= self._interval_updates):
                if since < self._min_gap_s():
                    self._postpone(since)
                    continue
                if self._backfills_done is not None:
                    await self._backfills_done()
                try:
                    await self.take()
                except BackfillRunning:  # one began before the export's seq: after it, then
                    continue
                except Exception as exc:  # the previous checkpoint stands
                    self._metrics.checkpoint_failures_total.inc()
                    log.error("checkpoint failed: %s", exc)
                    self._last = (time.monotonic(), seq, entries)

    def _min_gap_s(self) -> float:
        """The least time after the last checkpoint before the next periodic one."""
        share = self._max_pause_share
        return self._export_s / share if share < 1 else 0.0

    def _postpone(self, since: float) -> None:
        """A due checkpoint waits for the pause budget: counted and logged once."""
        if self._postponed:
            return
        self._postponed = True
        self._metrics.checkpoints_postponed_total.inc()
        log.info(
            "checkpoint due but put off %.1f s: the last export paused the engine %.2f s "
            "(checkpoint_max_pause_share %.2f)",
            self._min_gap_s() - since, self._export_s, self._max_pause_share,
        )  # fmt: skip

    async def take(self) -> Checkpoint:
        """One checkpoint at the next seq (see the module docstring)."""
        async with self.lock:
            t0 = time.perf_counter()
            fut: asyncio.Future[tuple[Exported, list[dict[str, Any]]]] = (
                asyncio.get_running_loop().create_future()
            )
            self._sequencer.submit_export(fut)
            ev, queries = await fut
            t1 = time.perf_counter()
            if self._output is not None:
                await self._output.flush()
            t2 = time.perf_counter()
            cmd = ev.cmd
            ckpt = Checkpoint(
                ev.graph, cmd.at_seq, queries, cmd.positions, cmd.log_entries,
                placement=self._placement,
            )  # fmt: skip
            path = await asyncio.to_thread(ckpt.save, self._state_dir)
            self.latest = ckpt  # durable now, whatever the offsets' commit does
            t3 = time.perf_counter()
            if self._ingest is not None:
                offsets = cmd.positions.get(self._ingest.source)
                if offsets:
                    await self._ingest.commit(offsets)
            m = self._metrics
            m.checkpoints_total.inc()
            m.checkpoint_seq.set(cmd.at_seq)
            m.checkpoint_bytes.set(path.stat().st_size)
            for phase, seconds in (("export", ev.seconds), ("flush", t2 - t1), ("write", t3 - t2)):
                m.checkpoint_seconds.labels(phase).observe(seconds)
            self._last = (time.monotonic(), cmd.at_seq, cmd.log_entries)
            self._export_s = ev.seconds
            self._postponed = False
            log.info(
                "checkpoint at seq %d: %d edges, export %.1f ms (engine), flush %.1f ms, "
                "write %.1f ms, total %.1f ms",
                cmd.at_seq, ev.graph.num_edges, ev.seconds * 1e3, (t2 - t1) * 1e3,
                (t3 - t2) * 1e3, (t3 - t0) * 1e3,
            )  # fmt: skip
            return ckpt
