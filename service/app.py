"""Assembly: builds every component from the settings, starts them in dependency order,
drains and stops them in reverse, and runs uvicorn with a SIGTERM that drains first.

Pipeline::

    HTTP POST /updates ─┐
                        ├─> Sequencer ─> EngineWorker thread ─> events ─> Fanout ─┬─> dcsm.matches
    Kafka dcsm.updates ─┘   (one seq)     (engine.apply)                         ├─> websockets
          └─ undecodable records ─> dcsm.dead-letter <─ engine rejections ───────┘

Start order: engine (load snapshot or --graph, JIT warm-up), Kafka producer, fan-out, Kafka
consumer. Startup runs in the background so ``/healthz`` answers at once and ``/readyz`` says
when the pipeline is up. Drain (SIGTERM): stop consuming, refuse new HTTP updates, wait for
everything admitted to be fanned out, let websocket clients catch up (bounded), write the
snapshot, commit the offsets it covers, close subscribers.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from pathlib import Path
from types import FrameType
from typing import Any

from dcsm.errors import DcsmError
from dcsm.graphio import read_graph
from dcsm.model import Graph

from .engine_worker import EngineWorker
from .errors import NotReady
from .fanout import Fanout
from .ingest import KafkaIngest
from .metrics import Metrics
from .outputs import KafkaOutput
from .queries import QueryCatalog, QueryState
from .sequencer import Sequencer
from .settings import Settings
from .snapshot import Snapshot

log = logging.getLogger("dcsm.service")

EVENTS_QUEUE_SIZE = 64
WEBSOCKET_FLUSH_S = 5.0


class Service:
    """The whole pipeline. Construction reads the snapshot or --graph (so a bad file fails
    before anything listens); :meth:`start` brings the pipeline up."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        s = settings
        self.metrics = Metrics()
        self.catalog = QueryCatalog(s.pending_frames)
        self.snapshot: Snapshot | None = None
        if s.snapshot_path is not None:
            self.snapshot = Snapshot.load(s.snapshot_path)
        graph: Graph | None = None
        next_seq = 0
        restore = []
        start_offsets = None
        if self.snapshot is not None:
            graph, next_seq = self.snapshot.graph, self.snapshot.next_seq
            for row in self.snapshot.queries:
                st = QueryState.restore(row)
                self.catalog.adopt(st, self._on_drop)
                restore.append((st.qid, st.spec.to_pattern(), st.mode == "count"))
            start_offsets = self.snapshot.offsets.get(s.updates_topic)
            if s.graph:
                log.warning("snapshot %s found: --graph %s is ignored", s.snapshot_path, s.graph)
            log.info(
                "restoring snapshot %s: %d vertices, %d edges, %d queries, next seq %d",
                s.snapshot_path, graph.num_vertices, graph.num_edges, len(restore), next_seq,
            )  # fmt: skip
        elif s.graph:
            graph = read_graph(s.graph)
            log.info(
                "loaded %s: %d vertices, %d edges", s.graph, graph.num_vertices, graph.num_edges
            )
        self.events: asyncio.Queue = asyncio.Queue()
        self.worker = EngineWorker(
            s.backend, self.events, graph, restore, next_seq, s.max_engine_batch_updates,
            max_events=EVENTS_QUEUE_SIZE,
        )  # fmt: skip
        self.sequencer = Sequencer(self.worker, next_seq, s.max_queued_updates)
        self.output = (
            KafkaOutput(s.kafka, s.matches_topic, s.dead_letter_topic) if s.kafka else None
        )
        self.fanout = Fanout(
            self.events, self.catalog, self.sequencer, self.metrics, self.output,
            self.worker.event_done,
        )  # fmt: skip
        self.ingest = None
        if s.kafka and self.output is not None:
            self.ingest = KafkaIngest(
                s.kafka, s.updates_topic, s.consumer_group, self.sequencer, self.output,
                self.metrics, start_offsets, s.max_record_updates, s.fetch_max_records,
                s.commit_interval_ms, s.fetch_max_wait_ms,
            )  # fmt: skip
        self.ready = False
        self.accepting = False
        self.fatal: str | None = None
        self.started_at = time.time()
        self.on_fatal: Any = None  # called with the message when startup fails
        self._starter: asyncio.Task | None = None
        self._drained: asyncio.Task | None = None
        self._bind_gauges()

    def _on_drop(self, n: int) -> None:
        self.metrics.gap_frames_total.inc(n)

    def _bind_gauges(self) -> None:
        m = self.metrics
        m.bind_queue("engine", lambda: self.worker.depth)
        m.bind_queue("fanout", lambda: self.events.qsize())
        m.bind_queue("kafka_out_frames", lambda: self.output.buffered if self.output else 0)
        m.bind_queue("admitted_updates", lambda: self.sequencer.queued)
        m.bind_queue(
            "websocket_frames",
            lambda: sum(len(sub) for st in self.catalog.states() for sub in st.all_subscribers()),
        )
        m.engine_memory_bytes.set_function(lambda: self.worker.memory_bytes)
        m.queries.set_function(lambda: len(self.catalog))
        m.next_seq.set_function(lambda: self.sequencer.next_seq)
        m.websocket_subscribers.set_function(
            lambda: sum(
                len(st.subscribers) + len(st.count_subscribers) for st in self.catalog.states()
            )
        )

    # -- lifecycle -----------------------------------------------------------------------

    def start_background(self) -> None:
        """Start the pipeline without blocking; ``self.on_fatal(message)`` if it cannot."""

        async def run() -> None:
            try:
                await self.start()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.fatal = (
                    f"{type(exc).__name__}: {exc}" if not isinstance(exc, DcsmError) else str(exc)
                )
                log.error("dcsm could not start: %s", self.fatal)
                if self.on_fatal is not None:
                    self.on_fatal(self.fatal)

        self._starter = asyncio.create_task(run(), name="dcsm-start")

    async def start(self) -> None:
        s = self.settings
        if s.kafka and s.create_topics:
            await ensure_topics(s.kafka, [s.updates_topic, s.matches_topic, s.dead_letter_topic])
        await self.worker.start()
        if self.output is not None:
            await self.output.start()
        await self.fanout.start()
        self.accepting = True
        if self.ingest is not None:
            await self.ingest.start()
        self.ready = True
        log.info("dcsm ready (next seq %d)", self.sequencer.next_seq)

    def check_accepting(self) -> None:
        if not self.accepting:
            raise NotReady(self.fatal or ("draining" if self.ready else "the engine is starting"))

    async def barrier(self) -> None:
        """Wait until everything submitted so far is fanned out."""
        fut = asyncio.get_running_loop().create_future()
        self.sequencer.submit_barrier(fut)
        await fut

    async def drain(self) -> None:
        """Idempotent; see the module docstring."""
        if self._drained is None:
            self._drained = asyncio.create_task(self._drain())
        await asyncio.shield(self._drained)

    async def _drain(self) -> None:
        if self._starter is not None and not self._starter.done():
            self._starter.cancel()
        if not self.ready:
            return
        t0 = time.time()
        self.accepting = False
        if self.ingest is not None:
            await self.ingest.stop()
        try:
            await asyncio.wait_for(self.barrier(), self.settings.drain_timeout_s)
        except TimeoutError:
            log.error(
                "drain timed out after %.0fs; snapshot skipped", self.settings.drain_timeout_s
            )
            return
        if self.output is not None:
            await self.output.flush()
        deadline = time.time() + WEBSOCKET_FLUSH_S
        while time.time() < deadline and not all(
            sub.idle
            for st in self.catalog.states()
            for sub in st.subscribers | st.count_subscribers
        ):
            await asyncio.sleep(0.02)
        path = self.settings.snapshot_path
        offsets = self.ingest.tracker.snapshot() if self.ingest is not None else {}
        if path is not None:
            await self.write_snapshot(path, offsets)
        if self.ingest is not None:
            await self.ingest.commit()
        for st in self.catalog.states():
            for sub in st.all_subscribers():
                sub.close()
        log.info("drained in %.2fs", time.time() - t0)

    async def write_snapshot(self, path: Path, offsets: dict[int, int]) -> None:
        fut = asyncio.get_running_loop().create_future()
        self.sequencer.submit_export(fut)
        graph, next_seq = await fut
        snap = Snapshot(
            graph, next_seq, [st.persist() for st in self.catalog.live()],
            {self.settings.updates_topic: offsets} if offsets else {},
        )  # fmt: skip
        await asyncio.to_thread(snap.save, path)
        log.info(
            "snapshot %s: %d vertices, %d edges, next seq %d, offsets %s",
            path, graph.num_vertices, graph.num_edges, next_seq, offsets,
        )  # fmt: skip

    async def stop(self) -> None:
        await self.drain()
        if self.ingest is not None:
            await self.ingest.close()
        await self.fanout.stop()
        if self.output is not None:
            await self.output.stop()
        await self.worker.stop()


async def ensure_topics(bootstrap: str, topics: list[str], partitions: int = 1) -> None:
    """Create whichever of ``topics`` do not exist yet."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10_000)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [NewTopic(t, partitions, 1) for t in topics if t not in existing]
        if missing:
            try:
                await admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass
    finally:
        await admin.close()


def serve(settings: Settings) -> int:
    """Run the service until SIGTERM/SIGINT; the process exit code."""
    import uvicorn

    from .api import create_app

    service = Service(settings)
    config = uvicorn.Config(
        create_app(service), host=settings.host, port=settings.port,
        log_level=settings.log_level, lifespan="on", ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )  # fmt: skip
    make_server(config, service).run()
    return 1 if service.fatal else 0


def make_server(config: Any, service: Service) -> Any:
    """A uvicorn.Server whose first SIGTERM/SIGINT drains the pipeline before exiting (a
    second one exits at once), and which exits when the pipeline cannot start."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        draining = False
        loop: asyncio.AbstractEventLoop | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.draining or self.loop is None:
                super().handle_exit(sig, frame)
                return
            self.draining = True
            log.info("%s: draining", signal.Signals(sig).name)
            loop = self.loop
            loop.call_soon_threadsafe(lambda: loop.create_task(self.drain_then_exit()))

        async def drain_then_exit(self) -> None:
            try:
                await service.drain()
            finally:
                self.should_exit = True

        async def serve(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets)

    server = DrainingServer(config)

    def on_fatal(_: str) -> None:
        server.should_exit = True

    service.on_fatal = on_fatal
    return server
