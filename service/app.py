"""Assembly: builds every component from the settings, recovers the state, starts the
pipeline, takes checkpoints, and drains and stops it.

Pipeline (data flows one way)::

    POST /updates ─┬─(with Kafka)─> dcsm.updates ─> KafkaIngest ─┐
                   └─(without)───> update log ───────────────────┼─> Sequencer ─> EngineWorker
    POST/DELETE /queries ─> query log ───────────────────────────┘    (one seq)    (engine.apply)
                                                                               │ events
         dcsm.matches <─┬─ Fanout <────────────────────────────────────────────┘
         websockets   <─┘   └─ rejected input -> dcsm.dead-letter

Durability (see service/README.md, "Crash safety"): an update is acknowledged once it is in
the input topic (or fsynced in the update log), a registration or deletion once it is fsynced
in the query log. Checkpoints (files: :mod:`dcsm.service.checkpoint`; when and how:
:mod:`dcsm.service.checkpointer`) are taken every ``checkpoint_interval_s`` or
``checkpoint_interval_updates``, and Kafka offsets are committed only up to the last one.
A restart restores the newest checkpoint and replays the query log and the inputs after it,
at the same seqs, so the state and the frames (same ids) are those of an uninterrupted run;
frames after the checkpoint may come twice, never not at all.

Replicas (:mod:`dcsm.service.replicas`, service/README.md "Replicas"): with ``replicas``
above 1, registrations and deletions go through the input topic as control records and
apply when the ingest reads them back, at the same seq on every replica, which also decides
each query's owner alike (shard mode ``queries``); the engine and the fan-out keep this
replica's share of the matching.

Start order: recovery (checkpoint, query log); the engine (load, JIT warm-up) in its thread
while the input lease is taken; Kafka producer, fan-out, update-log replay, Kafka consumer,
checkpointer. Startup runs in the background so ``/healthz`` answers at once and ``/readyz``
says when the pipeline is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.errors import DcsmError
from dcsm.gpu_options import engine_options
from dcsm.graphio import read_graph
from dcsm.model import Graph, Pattern, UpdateBatch
from dcsm.schemas import QuerySpec

from .checkpoint import Checkpoint, CheckpointError, reset_state
from .checkpointer import Checkpointer
from .codec import decode_record, encode_binary
from .durable import QueryLog, RecordLog
from .engine_worker import CPU_BATCH_UPDATES, EngineWorker
from .errors import NotReady, QueryNotFound
from .fanout import Fanout, FanoutFailed
from .frames import Encoding
from .idempotency import RECORD_HEADER as IDEMPOTENCY_HEADER
from .idempotency import IdempotencyStore, updates_answer
from .ingest import REQUEST_HEADER, KafkaIngest, committed_offsets, source_name
from .jsonscan import warm as warm_json_scanner
from .kafka_security import kafka_options_from_settings
from .logs import ConnectionState, dump_tasks
from .messages import Event, Register, Unregister
from .metrics import Metrics
from .outputs import KafkaOutput, OutputLost
from .ownership import InputLease
from .queries import Mode, QueryCatalog, QueryState
from .relay import MatchesRelay
from .replicas import (
    CONTROL_HEADER,
    Sharding,
    parse_control,
    pin_of,
    register_record,
    unregister_record,
)
from .sequencer import Sequencer
from .settings import Settings
from .tasks import cancel_and_wait

log = logging.getLogger("dcsm.service")

EVENTS_QUEUE_SIZE = 64
WEBSOCKET_FLUSH_S = 5.0
#: Seconds each step of :meth:`Service.stop` after the drain (closing a Kafka client, ...) may
#: take before the stop logs it and goes on: the state is durable by then.
STOP_STEP_S = 10.0
UPDATE_LOG_SOURCE = "log:updates"


class Reply:
    """Origin of an HTTP request applied without Kafka: resolves its future with
    (seq, outcome). With an idempotency ``key`` (``keyed``: the store and the durable
    position), its answer is recorded first."""

    def __init__(self, fut: asyncio.Future[tuple[np.ndarray, np.ndarray]] | None) -> None:
        self.fut = fut
        self.keyed: tuple[IdempotencyStore, str, dict[str, Any]] | None = None

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        if self.keyed is not None:
            store, key, position = self.keyed
            answer = updates_answer(len(seq), position, seq, outcome)
            await store.complete(key, 200, answer, settled=True)
        if self.fut is not None and not self.fut.done():
            self.fut.set_result((seq, outcome))

    async def fail(self, error: BaseException) -> None:
        if self.keyed is not None:
            await self.keyed[0].abandon(self.keyed[1], error)
        if self.fut is not None and not self.fut.done():
            self.fut.set_exception(error)


@dataclass
class Accepted:
    """What ``POST /api/v1/updates`` learns: seqs where known, and the outcomes once applied
    (``wait``). ``position``: where the updates were made durable."""

    count: int
    first_seq: int | None
    position: dict[str, Any]
    seq: np.ndarray | None = None
    outcome: np.ndarray | None = None


class Service:
    """The whole pipeline. Construction reads the checkpoint or --graph and the query log
    (so a bad file fails before anything listens); :meth:`start` brings the pipeline up."""

    def __init__(self, settings: Settings) -> None:
        self.settings = s = settings
        self.metrics = Metrics()
        self.catalog = QueryCatalog(s.pending_frames)
        self.sharding = Sharding(s.replicas, s.replica_index, s.shard)
        # Registrations and deletions this replica produced as control records, by request
        # id: resolved with (state, engine reply) when the ingest reads them back in order.
        self._control_waiters: dict[str, asyncio.Future[tuple[QueryState, Any]]] = {}
        self.state_dir = s.state_path
        self.restored: Checkpoint | None = None  # what the start restores
        if self.state_dir is not None:
            if s.reset_state:
                removed = reset_state(self.state_dir)
                log.warning(
                    "--reset-state: removed %s from %s", removed or "nothing", self.state_dir
                )
            self.restored = Checkpoint.latest(self.state_dir)
        graph, next_seq, positions, log_entries = self._initial_state()
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.worker = EngineWorker(
            s.backend, self.events, graph,
            [
                (st.qid, st.spec.to_pattern(), st.mode == "count", st.max_deltas)
                for st in self.catalog.live()
                if self.sharding.owns_query(st.replica)
            ],
            next_seq, s.max_engine_batch_updates, max_events=EVENTS_QUEUE_SIZE,
            backfill_threads=s.backfill_threads or max(1, (os.cpu_count() or 1) - 2),
            backfill_mode=s.backfill_mode,
            gpu_options=engine_options(s),
        )  # fmt: skip
        self.sequencer = Sequencer(
            self.worker.submit, next_seq, s.max_queued_updates,
            s.max_engine_batch_updates or CPU_BATCH_UPDATES,
            log_entries, positions,
        )  # fmt: skip
        self.query_log = QueryLog(self.state_dir / "queries.log") if self.state_dir else None
        self.update_log = (
            RecordLog(self.state_dir / "updates.log") if self.state_dir and not s.kafka else None
        )
        self._replay_query_log(log_entries)
        self.idempotency = IdempotencyStore(
            self.state_dir / "idempotency.log" if self.state_dir else None,
            s.idempotency_window_s,
        )
        # Security arguments of every Kafka client below (SASL, TLS), built once.
        self.kafka_options = kafka_options_from_settings(s) if s.kafka else {}
        self.output = (
            KafkaOutput(
                s.kafka,
                s.matches_topic,
                s.dead_letter_topic,
                linger_ms=s.output_linger_ms,
                acks=s.kafka_acks,
                client_options=self.kafka_options,
                request_timeout_ms=s.kafka_request_timeout_ms,
            )  # fmt: skip
            if s.kafka
            else None
        )
        self.fanout = Fanout(
            self.events, self.catalog, self.sequencer, self.metrics, self.output,
            self.worker.event_done, self.sharding,
        )  # fmt: skip
        self.ingest: KafkaIngest | None = None
        if s.kafka and self.output is not None:
            self.ingest = KafkaIngest(
                s.kafka, s.updates_topic, s.group, self.sequencer, self.output,
                self.metrics, positions.get(source_name(s.updates_topic)), s.max_record_updates,
                s.fetch_max_records, s.fetch_max_wait_ms, client_options=self.kafka_options,
                on_keyed=self._settle_keyed, on_caught_up=self._ingest_caught_up,
                on_offset_reset=s.on_offset_reset, on_input_error=self._input_lost,
                on_control=self._apply_control,
                publish_dead_letters=s.replica_index == 0,
            )  # fmt: skip
        self.lease: InputLease | None = None
        # Replicas: frames other replicas emit, from dcsm.matches to this one's websockets.
        self.relay: MatchesRelay | None = None
        if s.kafka and self.sharding.active:
            self.relay = MatchesRelay(
                s.kafka, s.matches_topic, self.catalog, self.sharding, self.kafka_options
            )
        self.ready = False
        self.accepting = False
        self.fatal: str | None = None
        self._drain_step = "starting"  # the step a drain is in (_settle)
        self.started_at = time.time()
        self.on_fatal: Callable[[str], None] | None = None  # called when startup fails
        self._control_lock = asyncio.Lock()  # query-log order == engine order
        self._update_log_lock = asyncio.Lock()  # update-log order == seq order
        self.checkpointer: Checkpointer | None = None
        if self.state_dir is not None:
            self.checkpointer = Checkpointer(
                self.state_dir, self.sequencer, self.output, self.ingest, self.metrics,
                self.query_log, s.checkpoint_interval_s, s.checkpoint_interval_updates,
                self.restored, log_entries, self.sharding.placement, self.fanout.backfills_done,
                s.checkpoint_max_pause_share,
            )  # fmt: skip
        self._tasks: list[asyncio.Task] = []
        self._starter: asyncio.Task | None = None
        self._drained: asyncio.Task | None = None
        self._bind_gauges()

    # -- recovery ------------------------------------------------------------------------

    def _initial_state(self) -> tuple[Graph | None, int, dict[str, dict[int, int]], int]:
        s = self.settings
        ckpt = self.restored
        if ckpt is None:
            graph = None
            if s.graph:
                graph = read_graph(s.graph)
                log.info(
                    "loaded %s: %d vertices, %d edges", s.graph, graph.num_vertices,
                    graph.num_edges,
                )  # fmt: skip
            return graph, 0, {}, 0
        rows = sorted(ckpt.queries, key=lambda row: int(row["qid"]))
        owners = self.sharding.restored_owners(rows, ckpt.placement)
        for row, owner in zip(rows, owners, strict=True):
            self.catalog.adopt(QueryState.restore(row, owner), self.on_drop)
        if s.graph:
            log.warning("checkpoint %s found: --graph %s is ignored", ckpt.path, s.graph)
        log.info(
            "restoring checkpoint %s: %d vertices, %d edges, %d queries, next seq %d, inputs %s",
            ckpt.path, ckpt.graph.num_vertices, ckpt.graph.num_edges, len(ckpt.queries),
            ckpt.next_seq, ckpt.positions,
        )  # fmt: skip
        self.metrics.checkpoint_seq.set(ckpt.next_seq)
        return ckpt.graph, ckpt.next_seq, ckpt.positions, ckpt.log_entries

    def _replay_query_log(self, applied: int) -> None:
        """Re-queue the registrations and deletions logged after the checkpoint, at their
        own seqs."""
        if self.query_log is None:
            return
        entries = self.query_log.entries(applied)
        for e in entries:
            if e["op"] == "register":
                spec = QuerySpec.model_validate(e["spec"])
                pin = pin_of(e)
                st = QueryState(
                    e["name"], int(e["qid"]), spec, e["mode"], e.get("encoding", "json"),
                    int(e["from_seq"]), float(e["created_at"]), max_deltas=e.get("max_deltas"),
                    replica=self.sharding.place(self.catalog.owners(), pin), pin=pin,
                )  # fmt: skip
                self.catalog.adopt(st, self.on_drop)
                self.sequencer.schedule(
                    Register(
                        st.qid,
                        spec.to_pattern(),
                        st.from_seq,
                        st.mode == "count",
                        bool(e["backfill"]),
                        max_deltas=st.max_deltas,
                    )  # fmt: skip
                )
            else:
                gone = self.catalog.by_qid(int(e["qid"]))
                if gone is not None:
                    gone.closing = True
                self.sequencer.schedule(Unregister(int(e["qid"]), int(e["from_seq"])))
        if entries:
            log.info("query log: %d entries after the checkpoint re-queued", len(entries))

    def on_drop(self, n: int) -> None:
        """A websocket subscriber dropped ``n`` frames."""
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
        # The engine loads and compiles in its thread while the input lease is taken (a
        # restart's two longest steps, side by side): it reads and publishes nothing until
        # the ingest, which starts after the lease, hands it updates.
        self.worker.launch()
        if s.kafka:
            if s.create_topics:
                await ensure_topics(
                    s.kafka, [s.updates_topic, s.matches_topic, s.dead_letter_topic],
                    client_options=self.kafka_options,
                )  # fmt: skip
            # Before anything is read or published: one service owns the input.
            self.lease = InputLease(
                s.kafka, s.updates_topic, s.group, s.input_lease_session_ms,
                self.kafka_options,
                self.state_dir / "lease-member.json" if self.state_dir is not None else None,
            )  # fmt: skip
            await self.lease.acquire(timeout_s=max(60.0, 3 * s.input_lease_session_ms / 1000))
            await self._refuse_empty_start()
        await asyncio.to_thread(warm_json_scanner)
        await self.worker.start()
        self._tasks.append(asyncio.create_task(self._watch_engine(), name="dcsm-engine-watch"))
        if self.output is not None:
            await self.output.start()
            self._tasks.append(asyncio.create_task(self._watch_output(), name="dcsm-output-watch"))
        await self.fanout.start()
        self._tasks.append(asyncio.create_task(self._watch_fanout(), name="dcsm-fanout-watch"))
        if self.relay is not None:
            await self.relay.start()
        await self._replay_update_log()
        if self.fatal is not None:  # halted while replaying (the fan-out failed)
            return
        self.accepting = True
        if self.ingest is not None:
            await self.ingest.start()
            self._tasks.append(asyncio.create_task(self._watch_kafka(), name="dcsm-kafka-ping"))
        if self.checkpointer is not None:
            self.checkpointer.restart_clock()  # the first one is due an interval from now
            self._tasks.append(asyncio.create_task(self.checkpointer.run(), name="dcsm-ckpt"))
        self.ready = True
        scheme = "https" if self.settings.tls_cert else "http"
        base = f"{scheme}://{self.settings.host}:{self.settings.port}"
        log.info(
            "dcsm ready at %s (API %s/api/v1, OpenAPI %s/docs, metrics %s/metrics), next seq %d",
            base, base, base, base, self.sequencer.next_seq,
        )  # fmt: skip

    async def _refuse_empty_start(self) -> None:
        """No checkpoint, but the group has committed offsets: the state that goes with
        them is missing, and starting empty there would silently lose it."""
        s = self.settings
        if self.restored is not None or s.reset_state or s.kafka is None:
            return
        committed = await committed_offsets(s.kafka, s.updates_topic, s.group, self.kafka_options)
        if committed:
            where = self.state_dir or "(no --state-dir)"
            raise CheckpointError(
                f"consumer group {s.group!r} has committed offsets on "
                f"{s.updates_topic} ({committed}) but {where} holds no checkpoint: the state "
                "that goes with them is missing. Restore the state directory (or its "
                "checkpoint.prev.npz as checkpoint.npz), or start with --reset-state to start "
                "empty from the earliest offset"
            )

    async def _replay_update_log(self) -> None:
        """HTTP updates fsynced after the checkpoint, back at their seqs (no Kafka)."""
        if self.update_log is None:
            return
        pos = self.sequencer.positions.get(UPDATE_LOG_SOURCE, {}).get(0, 0)
        n = 0
        for index, payload in self.update_log.read_from(pos):
            dec = decode_record(payload, 1 << 62)
            await self.sequencer.wait_for_room()
            origin = None
            key = self.idempotency.key_of_log_entry(index)
            if key is not None:  # its answer is recorded as the replay settles it
                origin = Reply(None)
                position = {"update_log": str(self.update_log.path), "entry": index}
                origin.keyed = (self.idempotency, key, position)
            self.sequencer.submit_updates(
                dec.updates, time.time(), origin, [(UPDATE_LOG_SOURCE, 0, index + 1)]
            )
            n += len(dec)
        if n:
            log.info("update log: %d updates after the checkpoint replayed", n)
        await self.idempotency.drop_unresolved(len(self.update_log))

    async def _settle_keyed(
        self, key: str, position: dict[str, Any], seq: np.ndarray, outcome: np.ndarray
    ) -> None:
        """Kafka ingest settles a record that carries an idempotency key."""
        answer = updates_answer(len(seq), position, seq, outcome)
        await self.idempotency.complete(key, 200, answer, settled=True)

    def _ingest_caught_up(self) -> None:
        """The ingest has read every record the topic held at start: once those are settled,
        a key still unresolved never reached the topic."""

        async def resolve() -> None:
            await self.barrier()
            await self.idempotency.drop_unresolved()

        self._tasks.append(asyncio.create_task(resolve(), name="dcsm-idempotency-recovery"))

    async def _watch_engine(self) -> None:
        """The engine stopped for good: stop consuming, refuse input, and exit without a
        checkpoint (one would commit offsets past updates the engine never applied); the
        restart replays them from the last checkpoint."""
        await self.worker.halted.wait()
        await self._halt(f"engine stopped: {self.worker.error}")

    async def _watch_output(self) -> None:
        """The broker did not take frames of the Kafka output: exit the same way, so that
        no checkpoint passes them; the restart replays from the last checkpoint and sends
        them again under the same ids (subscribers dedupe by id)."""
        assert self.output is not None
        await self.output.lost.wait()
        await self._halt(
            f"kafka output lost {self.output.failures} record(s) "
            f"({self.output.lost_reason}); stopping without a checkpoint so that a restart "
            "sends them again"
        )

    async def _watch_fanout(self) -> None:
        """An event raised in the fan-out (a bug, or an origin that could not be settled:
        the idempotency store, a dead letter): exit the same way, so that no checkpoint
        passes the frames it may not have sent."""
        await self.fanout.failed.wait()
        await self._halt(
            f"{self.fanout.failure}; stopping without a checkpoint so that a restart "
            "replays from the last one"
        )

    async def _halt(self, reason: str) -> None:
        """Stop for good on ``reason``: refuse input, stop every background task and the
        consumer, and have the server exit (``on_fatal``) without a final checkpoint."""
        self.fatal = reason
        log.error("%s", reason)
        self.accepting = False
        self.ready = False
        me = asyncio.current_task()
        for task in self._tasks:
            if task is not me:
                task.cancel()
        if self.ingest is not None:
            await self.ingest.stop()
        if self.on_fatal is not None:
            self.on_fatal(self.fatal)

    async def _watch_kafka(self) -> None:
        """Whether the broker answers (readiness), every second."""
        assert self.ingest is not None
        state = ConnectionState("kafka", log)
        while True:
            await asyncio.sleep(1.0)
            try:
                await self.ingest.ping(3.0)
                self.ingest.connected = True
                state.ok()
            except Exception as exc:
                state.failed(exc)
                self.ingest.connected = False
                continue
            try:
                await asyncio.wait_for(self.ingest.check_position(), 3.0)
            except Exception as exc:  # e.g. the topic is gone for now: the next round tells
                log.debug("input position check: %s", exc)

    def _input_lost(self, reason: str) -> None:
        """The ingest stopped consuming (on_offset_reset=stop): not ready, input refused
        (it would never be read), the reason on /readyz; the process stays up to say so."""
        self.fatal = reason
        self.accepting = False

    def check_accepting(self) -> None:
        if not self.accepting:
            raise NotReady(self.fatal or ("draining" if self.ready else "the engine is starting"))

    async def barrier(self) -> None:
        """Wait until everything submitted so far is fanned out; :class:`FanoutFailed` if
        the fan-out stopped on a failure meanwhile (it never gets there)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.sequencer.submit_barrier(fut)
        failed: asyncio.Future[Any] = asyncio.ensure_future(self.fanout.failed.wait())
        try:
            await asyncio.wait([fut, failed], return_when=asyncio.FIRST_COMPLETED)
        finally:
            failed.cancel()
        if not fut.done():
            raise FanoutFailed(self.fanout.failure)
        fut.result()

    async def drain(self) -> None:
        """Idempotent: stop consuming, refuse new HTTP input, finish everything admitted,
        let websocket clients catch up (bounded), write the final checkpoint, commit."""
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
        limit = self.settings.drain_timeout_s
        try:
            await asyncio.wait_for(self._settle(), limit)
        except TimeoutError:
            # What that step waits for, in the log; then the error naming it, last, so that
            # the end of the log (what a test or an operator reads first) says why.
            dump_tasks(asyncio.get_running_loop())
            self._unclean(f"the drain timed out after {limit:.0f}s while {self._drain_step}")
            return
        except (OutputLost, FanoutFailed) as exc:
            self._unclean(f"drain: {exc}")
            return
        except Exception as exc:
            self._unclean(f"the drain failed: {exc!r}", trace=True)
            return
        deadline = time.time() + WEBSOCKET_FLUSH_S
        while time.time() < deadline and not all(
            sub.idle
            for st in self.catalog.states()
            for sub in st.all_subscribers()
            if sub is not st.pending
        ):
            await asyncio.sleep(0.02)
        if self.checkpointer is not None:
            before = self.checkpointer.latest
            try:
                await asyncio.wait_for(self.checkpointer.take(), limit)
            except Exception as exc:  # TimeoutError included
                timeout = isinstance(exc, TimeoutError)
                why = "timed out" if timeout else f"failed: {exc!r}"
                if self.checkpointer.latest is not before:  # written; its offsets' commit not
                    log.warning(
                        "the final checkpoint is written, but committing its input offsets "
                        "%s (the next start resumes from it all the same)", why,
                    )  # fmt: skip
                else:
                    self._unclean(f"the final checkpoint {why}", trace=not timeout)
        for st in self.catalog.states():
            for sub in st.all_subscribers():
                sub.close()
        log.info("drained in %.2fs", time.time() - t0)

    def _unclean(self, why: str, trace: bool = False) -> None:
        """A stop without its final checkpoint: said in the log, and in the exit code (1,
        ``fatal``), since the next start resumes from the last checkpoint and sends again
        whatever this process emitted after it (nothing is lost, some deltas come twice)."""
        self.fatal = why
        msg = "%s; no final checkpoint: the next start resumes from the last one"
        (log.exception if trace else log.error)(msg, why)

    async def _settle(self) -> None:
        """Stop consuming and the background tasks, then wait until everything admitted is
        fanned out and acknowledged by the broker. ``_drain_step`` names the step under way
        (a drain that times out says which)."""
        if self.ingest is not None:
            self._drain_step = "stopping the consumer"
            await self.ingest.stop()
        # A periodic checkpoint may be writing in its thread: let it finish first (cancelling
        # the task would not stop the thread, and the final checkpoint would race it).
        self._drain_step = "waiting for a periodic checkpoint"
        async with self.checkpointer.lock if self.checkpointer else contextlib.nullcontext():
            self._drain_step = "stopping the background tasks"
            await cancel_and_wait(self._tasks)
        self._drain_step = "fanning out what was admitted"
        await self.barrier()
        self._drain_step = "waiting for backfills"
        await self.fanout.backfills_done()  # a backfill beside the stream holds frames
        if self.output is not None:
            self._drain_step = "flushing the Kafka output"
            await self.output.flush()

    async def stop(self) -> None:
        """Drain, then close every client and thread; a step that hangs (a broker that does
        not answer a LeaveGroup, ...) is logged and left behind after ``STOP_STEP_S``."""
        await self.drain()
        if self.ingest is not None:
            await _bounded("the kafka consumer", self.ingest.close())
        if self.lease is not None:
            await _bounded("the ownership lease", self.lease.release())
        if self.relay is not None:
            await _bounded("the relay", self.relay.stop())
        await _bounded("the fan-out", self.fanout.stop())
        if self.output is not None:
            await _bounded("the kafka producer", self.output.stop())
        await self.worker.stop()
        for durable in (self.query_log, self.update_log):
            if durable is not None:
                durable.close()
        self.idempotency.close()

    # -- what the API asks -----------------------------------------------------------------

    async def register_query(
        self,
        spec: QuerySpec,
        mode: Mode,
        encoding: Encoding,
        backfill: bool,
        max_deltas: int | None = None,
        pin: int | None = None,
    ) -> tuple[QueryState, int | None]:
        """Log the registration durably, then register it at its seq; (state, backfill).
        ``max_deltas``: deltas shipped per update (None: the service's default); ``pin``:
        the replica that must match it (400 unless it names one, in shard mode queries)."""
        self.check_accepting()
        self.sharding.check_pin(pin)
        if max_deltas is None and mode == "embeddings":
            max_deltas = self.settings.max_deltas_per_update or None
        if mode == "count":
            max_deltas = None  # counts are exact and small: nothing to cap
        if self.sharding.active:
            self.catalog.check_free(spec.name)
            value = register_record(
                spec.model_dump(), mode, encoding, backfill, max_deltas, time.time(), pin
            )
            st, reply = await self._through_topic(value)
            return st, await reply
        async with self._control_lock:
            owner = self.sharding.place(self.catalog.owners(), pin)
            st = self.catalog.reserve(spec, mode, encoding, self.on_drop, max_deltas)
            st.replica, st.pin = owner, pin
            slot = self.sequencer.reserve()
            st.from_seq = slot.seq
            entry = {
                "op": "register", "name": st.name, "qid": st.qid, "spec": spec.model_dump(),
                "mode": mode, "encoding": encoding, "from_seq": st.from_seq,
                "backfill": backfill, "created_at": st.created_at, "max_deltas": max_deltas,
                "pin": pin,
            }  # fmt: skip
            try:
                await self._log_control(entry)
            except BaseException:
                self.sequencer.cancel(slot)
                self.catalog.remove(st)
                raise
            fut: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
            cmd = Register(
                st.qid, spec.to_pattern(), st.from_seq, mode == "count", backfill, fut,
                max_deltas=max_deltas,
            )  # fmt: skip
            self.sequencer.fill(slot, cmd)
        return st, await fut

    async def unregister_query(self, name: str) -> tuple[QueryState, dict[str, Any]]:
        """Log the deletion durably, then unregister at its seq; (state, final stats) once
        every earlier frame is out."""
        st = self.catalog.get(name)
        if st.closing:
            raise QueryNotFound(f"query {name!r} is already being deleted")
        self.check_accepting()
        if self.sharding.active:
            st, reply = await self._through_topic(unregister_record(name))
            return st, await reply
        async with self._control_lock:
            st.closing = True
            slot = self.sequencer.reserve()
            entry = {"op": "unregister", "name": name, "qid": st.qid, "from_seq": slot.seq}
            try:
                await self._log_control(entry)
            except BaseException:
                self.sequencer.cancel(slot)
                st.closing = False
                raise
            fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self.sequencer.fill(slot, Unregister(st.qid, slot.seq, fut))
        return st, await fut

    # -- registrations and deletions through the input topic (replicas) ------------------

    async def _through_topic(self, value: bytes) -> tuple[QueryState, asyncio.Future[Any]]:
        """Produce a control record to the input topic and wait until this replica's ingest
        reads it back and applies it (as every replica does, at the same seq); then
        (state, the engine's reply). Raises what applying it raised (409, 404)."""
        assert self.output is not None
        request = uuid.uuid4().hex
        waiter = self._control_waiters[request] = asyncio.get_running_loop().create_future()
        headers = [(CONTROL_HEADER, b"1"), (REQUEST_HEADER, request.encode())]
        try:
            await self.output.produce(self.settings.updates_topic, value, headers)
            return await waiter
        finally:
            self._control_waiters.pop(request, None)

    def _apply_control(self, value: bytes, request: str | None) -> str | None:
        """The ingest read a control record: apply it at the next seq (synchronously, so
        it falls exactly between the updates of the records around it). A record every
        replica refuses alike (a taken name, an unknown one) changes nothing. Returns why
        the record is malformed (not one this service writes: a dead letter), else None."""
        waiter = self._control_waiters.get(request) if request else None
        reply = asyncio.get_running_loop().create_future() if waiter is not None else None
        try:
            body = parse_control(value)
            spec = QuerySpec.model_validate(body["spec"]) if body["op"] == "register" else None
            registers = (spec, spec.to_pattern()) if spec is not None else None
        except Exception as exc:
            error = ValueError(f"malformed control record: {exc}")
            _refuse_control(waiter, error)
            return str(error)
        try:
            if registers is not None:
                st = self._register_now(body, *registers, reply)
            else:
                st = self._unregister_now(body["name"], reply)
        except Exception as exc:
            _refuse_control(waiter, exc)
            return None
        if waiter is not None and not waiter.done():
            waiter.set_result((st, reply))
        return None

    def _register_now(
        self, body: dict[str, Any], spec: QuerySpec, pattern: Pattern, reply: asyncio.Future | None
    ) -> QueryState:
        """Apply a registration's control record (``body``, checked by ``parse_control``,
        its ``spec`` and ``pattern``); its owner is decided here, from the catalog every
        replica holds alike at this point (service/replicas.py)."""
        mode, max_deltas = body["mode"], body.get("max_deltas")
        pin = pin_of(body, "replica")
        owner = self.sharding.place(self.catalog.owners(), pin)
        st = self.catalog.reserve(
            spec, mode, body["encoding"], self.on_drop, max_deltas, replace_closing=True
        )
        st.replica, st.pin = owner, pin
        st.created_at = float(body["created_at"])  # the same on every replica
        slot = self.sequencer.reserve()
        st.from_seq = slot.seq
        cmd = Register(
            st.qid, pattern, st.from_seq, mode == "count", body["backfill"],
            reply, max_deltas=max_deltas, remote=not self.sharding.owns_query(st.replica),
            logged=False,
        )  # fmt: skip
        self.sequencer.fill(slot, cmd)
        return st

    def _unregister_now(self, name: str, reply: asyncio.Future | None) -> QueryState:
        st = self.catalog.get(name)
        if st.closing:
            raise QueryNotFound(f"query {name!r} is already being deleted")
        st.closing = True
        slot = self.sequencer.reserve()
        cmd = Unregister(
            st.qid, slot.seq, reply, remote=not self.sharding.owns_query(st.replica),
            logged=False,
        )  # fmt: skip
        self.sequencer.fill(slot, cmd)
        return st

    async def _log_control(self, entry: dict[str, Any]) -> None:
        if self.query_log is not None:
            await asyncio.to_thread(self.query_log.append, entry)

    async def submit_updates(
        self, batch: UpdateBatch, wait: bool, key: str | None = None
    ) -> Accepted:
        """Make HTTP updates durable (the input topic, or the update log), then apply them
        in the one global order. ``batch.ts``: arrival times. ``key``: an idempotency key
        reserved in ``self.idempotency``; it is noted durably before the updates, and their
        answer is recorded as they are settled (service/idempotency.py)."""
        self.check_accepting()
        s = self.settings
        n = len(batch)
        value = encode_binary(batch, batch.ts)
        store = self.idempotency
        if self.ingest is not None and self.output is not None:
            request = uuid.uuid4().hex
            headers = [(REQUEST_HEADER, request.encode())]
            if key is not None:
                headers.append((IDEMPOTENCY_HEADER, key.encode()))
            try:
                if key is not None:
                    await store.begin(key)
                fut = self.ingest.expect(request) if wait else None
                md = await self.output.produce(s.updates_topic, value, headers)
            except BaseException as exc:
                self.ingest.forget(request)
                if key is not None:
                    await store.abandon(key, exc)
                raise
            position: dict[str, Any] = {
                "topic": s.updates_topic, "partition": md.partition, "offset": md.offset,
            }  # fmt: skip
            if fut is None:
                return Accepted(n, None, position)
            try:
                seq, outcome = await fut
            except Exception as exc:  # the engine failed on it: nothing applied
                if key is not None:
                    await store.abandon(key, exc)
                raise
            return Accepted(n, int(seq[0]) if n else None, position, seq, outcome)
        await self.sequencer.wait_for_room()
        reply: asyncio.Future[tuple[np.ndarray, np.ndarray]] = (
            asyncio.get_running_loop().create_future()
        )
        origin = Reply(reply)
        async with self._update_log_lock:
            positions: list[tuple[str, int, int]] = []
            position = {}
            try:
                if key is not None:
                    log_index = len(self.update_log) if self.update_log is not None else None
                    await store.begin(key, log_index)
                if self.update_log is not None:
                    index = await asyncio.to_thread(self.update_log.append, value)
                    positions.append((UPDATE_LOG_SOURCE, 0, index + 1))
                    position = {"update_log": str(self.update_log.path), "entry": index}
            except BaseException as exc:
                if key is not None:
                    await store.abandon(key, exc)
                raise
            if key is not None:
                origin.keyed = (store, key, position)
            first = self.sequencer.submit_updates(batch, time.time(), origin, positions)
        if not wait:
            return Accepted(n, first, position)
        seq, outcome = await reply
        return Accepted(n, first, position, seq, outcome)


async def ensure_topics(
    bootstrap: str,
    topics: list[str],
    partitions: int = 1,
    client_options: dict[str, Any] | None = None,
) -> None:
    """Create whichever of ``topics`` do not exist yet (``client_options``: SASL/TLS)."""
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import TopicAlreadyExistsError

    admin = AIOKafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=10_000, **(client_options or {})
    )
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


def _refuse_control(waiter: asyncio.Future | None, error: BaseException) -> None:
    """A control record not applied: the error to the request waiting for it, if this
    replica took that request, else a log line (the replica that did answers it)."""
    if waiter is not None and not waiter.done():
        waiter.set_exception(error)
    else:
        log.warning("control record not applied: %s", error)


async def _bounded(what: str, step: Awaitable[None]) -> None:
    """Await one step of a stop; a failure or a hang is logged, never raised (only a cancel
    of the stopping task itself goes on up). aiokafka's ``stop()`` re-raises the
    CancelledError of its own fetch task when the broker is gone: that is a failure here."""
    try:
        await asyncio.wait_for(step, STOP_STEP_S)
    except TimeoutError:
        log.warning("stopping: %s did not stop within %gs; going on", what, STOP_STEP_S)
    except (Exception, asyncio.CancelledError) as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        log.warning("stopping: %s stopped uncleanly: %s", what, exc or type(exc).__name__)
