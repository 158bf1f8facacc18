"""Kafka ingest: ``dcsm.updates`` records into the sequencer, bad records to dead letters.

Each poll's records are decoded (:mod:`dcsm.service.codec`) and submitted as one batch whose
origin is the poll. An update's arrival time (``arrival_ts`` in its frames) is its own ``ts``
if the producer gave one, else the record's Kafka timestamp: both are stored in the topic, so a
replay after a crash stamps every update exactly as the first run did. A record that cannot be
decoded, or an element of one, goes to the dead-letter topic with its original bytes and the
reason right away; an update the engine rejects (label conflict) goes there once the engine
says so. A record produced by ``POST /api/v1/updates`` carries a ``dcsm-request`` header: its
outcomes go back to the waiting request.

Offsets
-------
The service commits offsets only up to its last durable checkpoint (see
:mod:`dcsm.service.checkpoint`): a restart restores that checkpoint and replays exactly the
records after it. The committed offsets are what monitoring sees as the group's position and
what tells a service without its checkpoint that it must not start empty (see
:func:`check_committed`).

Backpressure: fetching waits while the sequencer's admission bound is full, so memory stays
bounded; the records wait in Kafka, and ``dcsm_consumer_lag`` shows how many.

The partition is assigned explicitly, so a start seeks exactly to its checkpoint's offset;
the consumer group only stores offsets. One service owns the topic: the input lease
(:mod:`dcsm.service.ownership`) makes sure of it, and a topic of more than one partition is
refused at start (their records would interleave in no defined order).

Out of range
------------
When the position is no longer in the topic (the broker lost the topic and it was created
again, or retention truncated it), the consumer notices: a fetch says so
(``OffsetOutOfRangeError``: the client never resets by itself), or the topic's end offset
(the high watermark of a fetch) is below the position
(:meth:`KafkaIngest.check_position`, every second). Then
``on_offset_reset`` decides: ``stop`` (default) stops consuming and reports the reason
(:attr:`KafkaIngest.input_error`, shown by ``/readyz``); ``earliest`` goes on from the
earliest offset the topic holds. Either way one log line says what happened.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.model import OUTCOME_LABEL_CONFLICT, OUTCOME_NAMES, OUTCOME_SELF_LOOP, UpdateBatch

from .codec import decode_record, merge
from .errors import ConfigError
from .idempotency import RECORD_HEADER as IDEMPOTENCY_HEADER
from .metrics import Metrics
from .outputs import KafkaOutput
from .replicas import CONTROL_HEADER
from .sequencer import Sequencer

log = logging.getLogger("dcsm.service.ingest")

REQUEST_HEADER = "dcsm-request"


def source_name(topic: str) -> str:
    """The key of a topic's offsets in checkpoint positions."""
    return f"kafka:{topic}"


@dataclass(slots=True)
class _Record:
    partition: int
    offset: int
    value: bytes
    index: np.ndarray  # int32: position inside the record of each update submitted
    start: int  # first position in the poll's batch
    stop: int
    request: str | None  # dcsm-request header: an HTTP request waits for this record
    key: str | None = None  # dcsm-idempotency-key header: its answer is recorded


class _Poll:
    """Origin of one poll's batch (see messages.Origin)."""

    def __init__(self, ingest: KafkaIngest, records: list[_Record]) -> None:
        self._ingest = ingest
        self._records = records

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        rejected = np.flatnonzero(
            (outcome == OUTCOME_SELF_LOOP) | (outcome == OUTCOME_LABEL_CONFLICT)
        )
        if len(rejected):
            starts = np.array([r.start for r in self._records])
            for pos in rejected.tolist():
                rec = self._records[int(np.searchsorted(starts, pos, side="right")) - 1]
                reason = OUTCOME_NAMES[int(outcome[pos])]
                await self._ingest.dead_letter(
                    rec, reason, f"rejected by the engine: {reason} (seq {int(seq[pos])})",
                    int(rec.index[pos - rec.start]),
                )  # fmt: skip
        on_keyed = self._ingest.on_keyed
        for rec in self._records:
            if rec.key is not None and on_keyed is not None:
                where = {"topic": self._ingest.topic, "partition": rec.partition,
                         "offset": rec.offset}  # fmt: skip
                await on_keyed(
                    rec.key, where, seq[rec.start : rec.stop], outcome[rec.start : rec.stop]
                )
            if rec.request is not None:
                self._ingest.answer(
                    rec.request, seq[rec.start : rec.stop], outcome[rec.start : rec.stop]
                )

    async def fail(self, error: BaseException) -> None:
        """The engine raised on this poll: every record goes to the dead letters (so the
        failure is visible and replayable) and the stream moves on."""
        for rec in self._records:
            if len(rec.index):
                await self._ingest.dead_letter(rec, "engine_error", f"engine failed: {error}", None)
            if rec.request is not None:
                self._ingest.answer_error(rec.request, error)


class KafkaIngest:
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        group: str,
        sequencer: Sequencer,
        output: KafkaOutput,
        metrics: Metrics,
        start_offsets: dict[int, int] | None,
        max_record_updates: int,
        fetch_max_records: int,
        fetch_max_wait_ms: int,
        from_earliest: bool = False,
        client_options: dict[str, Any] | None = None,
        on_keyed: Callable[[str, dict[str, Any], np.ndarray, np.ndarray], Awaitable[None]]
        | None = None,
        on_caught_up: Callable[[], None] | None = None,
        on_offset_reset: str = "stop",
        on_input_error: Callable[[str], None] | None = None,
        on_control: Callable[[bytes, str | None], str | None] | None = None,
        publish_dead_letters: bool = True,
    ) -> None:
        """``client_options``: security arguments of the consumer (service/kafka_security.py).
        ``on_keyed(key, position, seq, outcome)``: awaited as a record with an idempotency key
        is settled; ``on_caught_up()``: called once every record the topic held at start has
        been read. ``on_offset_reset``: ``stop`` or ``earliest`` (see Out of range);
        ``on_input_error(reason)``: called once the ``stop`` policy stopped consuming.
        ``on_control(value, request)``: applies a control record (header ``dcsm-control``: a
        registration or deletion, service/replicas.py) at the current seq, after the updates
        of the records before it, and returns why it is malformed (it becomes a dead letter,
        reason ``malformed_control``) or None; without it, control records are dead
        letters.
        ``publish_dead_letters``: False on all replicas but one (they would publish the same
        dead letters N times); they are counted all the same."""
        self._bootstrap = bootstrap
        self._client_options = client_options or {}
        self.on_keyed = on_keyed
        self._on_caught_up = on_caught_up
        self._catch_up: dict[int, int] | None = None  # partition -> end offset at start
        self.topic = topic
        self.source = source_name(topic)
        self._group = group
        self._sequencer = sequencer
        self._output = output
        self._metrics = metrics
        self._start_offsets = start_offsets
        self._from_earliest = from_earliest
        self._max_record_updates = max_record_updates
        self._fetch_max_records = fetch_max_records
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self._committed: dict[int, int] = {}
        self._consumer: Any = None
        self._tps: list[Any] = []
        self._task: asyncio.Task | None = None
        self._stopping = False
        self._requests: dict[str, asyncio.Future[tuple[np.ndarray, np.ndarray]]] = {}
        self._next: dict[int, int] = {}  # partition -> next offset to read
        self._on_offset_reset = on_offset_reset
        self._on_input_error = on_input_error
        self._on_control = on_control
        self._publish_dead_letters = publish_dead_letters
        self.input_error: str | None = None  # why consuming stopped (on_offset_reset=stop)
        self.offset_resets = 0
        self.connected = False
        self.records = 0

    async def start(self) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        c = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            group_id=self._group,
            enable_auto_commit=False,
            auto_offset_reset="none",  # an out-of-range position is ours to handle
            fetch_max_wait_ms=self._fetch_max_wait_ms,
            max_partition_fetch_bytes=16 * 1024 * 1024,
            fetch_max_bytes=64 * 1024 * 1024,
            **self._client_options,
        )
        await c.start()
        self._consumer = c
        parts = await partitions(c, self.topic)
        if len(parts) > 1:
            await c.stop()
            self._consumer = None
            raise ConfigError(
                f"input topic {self.topic} has {len(parts)} partitions: dcsm consumes one "
                "(records of several partitions would interleave in no defined order); "
                "recreate it with one partition"
            )
        self._tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
        c.assign(self._tps)
        for tp in self._tps:
            if self._start_offsets is not None and tp.partition in self._start_offsets:
                pos = self._start_offsets[tp.partition]
                c.seek(tp, pos)
                log.info("ingest %s: from offset %d (checkpoint)", tp, pos)
            else:
                await c.seek_to_beginning(tp)
                pos = 0
                log.info("ingest %s: from the earliest offset", tp)
            self._next[tp.partition] = pos
        if self._on_caught_up is not None:
            ends = await c.end_offsets(self._tps)
            self._catch_up = {tp.partition: off for tp, off in ends.items()}
            self._check_caught_up()
        await self.check_position()
        self.connected = True
        self._metrics.consumer_lag.set_function(self.lag)
        self._task = asyncio.create_task(self._run(), name="dcsm-ingest")

    def lag(self) -> float:
        """Records in the topic not yet read (all partitions), as of the last fetch."""
        c = self._consumer
        if c is None:
            return 0.0
        total = 0
        for tp in self._tps:
            high = c.highwater(tp)
            if high is not None and tp.partition in self._next:
                total += max(0, high - self._next[tp.partition])
        return float(total)

    async def stop(self) -> None:
        """Finish the poll in hand and stop consuming (the drain commits afterwards)."""
        self._stopping = True
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
            self._task = None

    async def close(self) -> None:
        self.connected = False
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            await consumer.stop()

    async def commit(self, offsets: dict[int, int]) -> None:
        """Commit ``offsets`` (those of a durable checkpoint) for the group."""
        from aiokafka import TopicPartition

        fresh = {p: o for p, o in offsets.items() if o > self._committed.get(p, -1)}
        if not fresh or self._consumer is None:
            return
        await self._consumer.commit({TopicPartition(self.topic, p): o for p, o in fresh.items()})
        self._committed.update(fresh)

    async def ping(self, timeout_s: float) -> None:
        """A metadata round trip (readiness): raises when the broker does not answer."""
        await asyncio.wait_for(self._consumer.topics(), timeout_s)

    async def check_position(self) -> None:
        """The topic's end below the position: it was recreated or truncated. The end is the
        high watermark of the last fetch response (tansu's ListOffsets answers a wrong end
        once records came in one batch); it never lags the records already read."""
        c = self._consumer
        if c is None or self.input_error is not None:
            return
        for tp in self._tps:
            end = c.highwater(tp)
            pos = self._next.get(tp.partition, 0)
            if end is not None and end < pos:
                await self._out_of_range(tp, pos, f"the topic ends at offset {end}")

    async def _out_of_range(self, tp: Any, pos: int, why: str) -> None:
        """Follow ``on_offset_reset`` for partition ``tp`` whose position ``pos`` is gone."""
        c = self._consumer
        what = (
            f"input {tp.topic}/{tp.partition}: position {pos} is no longer in the topic ({why}; "
            "recreated or truncated?)"
        )
        if self._on_offset_reset == "earliest":
            start = (await c.beginning_offsets([tp]))[tp]
            c.seek(tp, start)
            self._next[tp.partition] = start
            self._committed.pop(tp.partition, None)  # the next checkpoint commits lower
            self.offset_resets += 1
            log.warning("%s: on_offset_reset=earliest, going on from offset %d", what, start)
            return
        self.input_error = (
            f"{what}: consuming stopped (on_offset_reset=stop); restart with --reset-state "
            "or --on-offset-reset earliest"
        )
        self._stopping = True
        log.error("%s", self.input_error)
        if self._on_input_error is not None:
            self._on_input_error(self.input_error)

    def _check_caught_up(self) -> None:
        if self._catch_up is None or self._on_caught_up is None:
            return
        if all(self._next.get(p, 0) >= end for p, end in self._catch_up.items()):
            self._catch_up = None
            self._on_caught_up()

    # -- HTTP requests whose updates travel through the topic ----------------------------

    def expect(self, request: str) -> asyncio.Future[tuple[np.ndarray, np.ndarray]]:
        """A future for the (seq, outcome) of the record carrying header ``request``."""
        fut = self._requests[request] = asyncio.get_running_loop().create_future()
        return fut

    def forget(self, request: str) -> None:
        self._requests.pop(request, None)

    def answer(self, request: str, seq: np.ndarray, outcome: np.ndarray) -> None:
        fut = self._requests.pop(request, None)
        if fut is not None and not fut.done():
            fut.set_result((seq, outcome))

    def answer_error(self, request: str, error: BaseException) -> None:
        fut = self._requests.pop(request, None)
        if fut is not None and not fut.done():
            fut.set_exception(error)

    # -- the loop ------------------------------------------------------------------------

    async def dead_letter(self, rec: _Record, reason: str, message: str, index: int | None) -> None:
        self._metrics.dead_letters_total.labels(reason).inc()
        log.debug("dead letter %s/%d@%d: %s", self.topic, rec.partition, rec.offset, message)
        if not self._publish_dead_letters:
            return
        await self._output.dead_letter(
            rec.value, reason, message, f"{self.topic}/{rec.partition}@{rec.offset}", index
        )

    async def _run(self) -> None:
        from aiokafka.errors import OffsetOutOfRangeError

        c = self._consumer
        while not self._stopping:
            await self._sequencer.wait_for_room()
            try:
                polled = await c.getmany(timeout_ms=100, max_records=self._fetch_max_records)
            except OffsetOutOfRangeError as exc:
                gone = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
                for tp, pos in gone.items():
                    await self._out_of_range(tp, pos, "the broker says out of range")
                if not gone:
                    log.warning("kafka poll: %s", exc)
                    await asyncio.sleep(0.5)
                continue
            except Exception as exc:  # broker hiccups: aiokafka reconnects; keep polling
                log.warning("kafka poll failed: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if polled:
                await self._submit(polled)

    async def _submit(self, polled: dict[Any, list[Any]]) -> None:
        """One poll's records: their updates as one batch, cut at each control record (which
        applies between the updates before it and those after it)."""
        received = time.time()
        parts: list[UpdateBatch] = []
        records: list[_Record] = []
        ends: dict[int, int] = {}  # partition -> offset after the last record taken
        pos = 0

        def flush() -> None:
            nonlocal parts, records, ends, pos
            if records:
                origin = _Poll(self, records)
                positions = [(self.source, p, o) for p, o in ends.items()]
                self._sequencer.submit_updates(merge(parts), received, origin, positions)
            parts, records, ends, pos = [], [], {}, 0

        for tp, msgs in polled.items():
            for msg in msgs:
                self.records += 1
                request = idem = None
                control = False
                for key, value in msg.headers or ():
                    if key == REQUEST_HEADER:
                        request = value.decode(errors="replace")
                    elif key == IDEMPOTENCY_HEADER:
                        idem = value.decode(errors="replace")
                    elif key == CONTROL_HEADER:
                        control = True
                if control and self._on_control is not None:
                    flush()
                    bad = self._on_control(msg.value or b"", request)
                    if bad is not None:
                        rec = _Record(tp.partition, msg.offset, msg.value or b"",
                                      np.empty(0, np.int32), pos, pos, request)  # fmt: skip
                        await self.dead_letter(rec, "malformed_control", bad, None)
                    self._sequencer.advance(self.source, tp.partition, msg.offset + 1)
                    continue
                dec = decode_record(msg.value, self._max_record_updates)
                rec = _Record(
                    tp.partition, msg.offset, msg.value or b"", dec.index, pos, pos + len(dec),
                    request, idem,
                )  # fmt: skip
                for err in dec.errors:
                    await self.dead_letter(rec, err.reason, err.message, err.index)
                records.append(rec)
                if len(dec):
                    ts = dec.updates.ts
                    missing = ts == 0
                    if missing.any():
                        ts[missing] = msg.timestamp / 1000.0
                    parts.append(dec.updates)
                    pos += len(dec)
                ends[tp.partition] = msg.offset + 1
            self._next[tp.partition] = msgs[-1].offset + 1
        flush()
        self._check_caught_up()


async def partitions(consumer: Any, topic: str) -> set[int]:
    """The topic's partitions (waiting briefly for metadata); RuntimeError if none."""
    parts = consumer.partitions_for_topic(topic)
    for _ in range(100):
        if parts:
            return set(parts)
        await consumer.force_metadata_update()
        parts = consumer.partitions_for_topic(topic)
        await asyncio.sleep(0.05)
    raise RuntimeError(f"topic {topic!r} has no partitions (does it exist?)")


async def committed_offsets(
    bootstrap: str, topic: str, group: str, client_options: dict[str, Any] | None = None
) -> dict[int, int]:
    """The group's committed offsets on ``topic`` (partitions without one are left out)."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    c = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
        **(client_options or {}),
    )  # fmt: skip
    await c.start()
    try:
        tps = [TopicPartition(topic, p) for p in sorted(await partitions(c, topic))]
        c.assign(tps)
        out = {}
        for tp in tps:
            pos = await c.committed(tp)
            if pos is not None and pos > 0:
                out[tp.partition] = pos
        return out
    finally:
        await c.stop()
