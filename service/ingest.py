"""Kafka ingest: ``dcsm.updates`` records into the sequencer, bad records to dead letters.

Each poll's records are decoded (:mod:`dcsm.service.codec`), stamped with one arrival time,
and submitted as one batch whose origin is the poll itself. A record that cannot be decoded,
or an element of one, goes to the dead-letter topic with its original bytes and the reason
right away; an update the engine rejects (label conflict) goes there once the engine says so.

Offsets (at-least-once)
-----------------------
A record's offset becomes committable only after every update in it has been through the
engine and its deltas handed to the output producer (the fan-out settles the poll's origin),
and a commit first flushes that producer. So a committed offset never covers an update whose
deltas could be lost. On SIGTERM the service drains, snapshots the graph with exactly the
offsets it covers, and commits them; on start it seeks to the snapshot's offsets, so the
output continues exactly where it stopped. After a crash (no fresh snapshot) it seeks to the
last snapshot's offsets (or, with none, to the group's committed offsets, else the earliest)
and replays: deltas since then may be emitted twice, never lost.

The partitions are assigned explicitly (one service instance owns the topic); the consumer
group only stores offsets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.model import OUTCOME_LABEL_CONFLICT, OUTCOME_NAMES, OUTCOME_SELF_LOOP

from .codec import decode_record, merge
from .metrics import Metrics
from .outputs import KafkaOutput
from .sequencer import Sequencer

log = logging.getLogger("dcsm.service.ingest")


class OffsetTracker:
    """Per partition, the next offset to consume once everything before it is emitted."""

    def __init__(self, start: dict[int, int] | None = None) -> None:
        self._done: dict[int, int] = dict(start or {})

    def done(self, partition: int, next_offset: int) -> None:
        if next_offset > self._done.get(partition, -1):
            self._done[partition] = next_offset

    def snapshot(self) -> dict[int, int]:
        return dict(self._done)


@dataclass
class _Record:
    partition: int
    offset: int
    value: bytes
    index: np.ndarray  # int32: position inside the record of each update submitted
    start: int  # first position in the poll's batch


class _Poll:
    """Origin of one poll's batch (see fanout.Origin)."""

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
        for rec in self._records:
            self._ingest.tracker.done(rec.partition, rec.offset + 1)

    async def fail(self, error: BaseException) -> None:
        """The engine raised on this poll: every record goes to the dead letters (so the
        failure is visible and replayable) and the stream moves on."""
        for rec in self._records:
            if len(rec.index):
                await self._ingest.dead_letter(rec, "engine_error", f"engine failed: {error}", None)
            self._ingest.tracker.done(rec.partition, rec.offset + 1)


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
        commit_interval_ms: int,
        fetch_max_wait_ms: int = 5,
    ) -> None:
        self._bootstrap = bootstrap
        self.topic = topic
        self._group = group
        self._sequencer = sequencer
        self._output = output
        self._metrics = metrics
        self._start_offsets = start_offsets
        self._max_record_updates = max_record_updates
        self._fetch_max_records = fetch_max_records
        self._commit_interval_s = commit_interval_ms / 1000
        self._fetch_max_wait_ms = fetch_max_wait_ms
        self.tracker = OffsetTracker(start_offsets)
        self._committed: dict[int, int] = {}
        self._consumer: Any = None
        self._tasks: list[asyncio.Task] = []
        self._stopping = False
        self._stop_event = asyncio.Event()
        self.connected = False
        self.records = 0

    async def start(self) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        c = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            group_id=self._group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=self._fetch_max_wait_ms,
            max_partition_fetch_bytes=16 * 1024 * 1024,
            fetch_max_bytes=64 * 1024 * 1024,
        )
        await c.start()
        self._consumer = c
        parts = c.partitions_for_topic(self.topic)
        for _ in range(100):
            if parts:
                break
            await c.force_metadata_update()
            parts = c.partitions_for_topic(self.topic)
            await asyncio.sleep(0.05)
        if not parts:
            raise RuntimeError(f"topic {self.topic!r} has no partitions (does it exist?)")
        tps = [TopicPartition(self.topic, p) for p in sorted(parts)]
        c.assign(tps)
        for tp in tps:
            if self._start_offsets and tp.partition in self._start_offsets:
                pos = self._start_offsets[tp.partition]
                source = "snapshot"
            else:
                pos = await c.committed(tp)
                source = "committed"
            if pos is None:
                await c.seek_to_beginning(tp)
                log.info("ingest %s: from the earliest offset", tp)
            else:
                c.seek(tp, pos)
                self.tracker.done(tp.partition, pos)
                self._committed[tp.partition] = pos
                log.info("ingest %s: from offset %d (%s)", tp, pos, source)
        self.connected = True
        self._tasks = [
            asyncio.create_task(self._run(), name="dcsm-ingest"),
            asyncio.create_task(self._commit_loop(), name="dcsm-commit"),
        ]

    async def stop(self) -> None:
        """Finish the poll in hand, stop consuming (commits are the caller's, after drain)."""
        self._stopping = True
        self._stop_event.set()
        for t in self._tasks:
            try:
                await asyncio.wait_for(t, timeout=5)
            except (TimeoutError, asyncio.CancelledError):
                t.cancel()
        self._tasks = []

    async def close(self) -> None:
        self.connected = False
        if self._consumer is not None:
            consumer, self._consumer = self._consumer, None
            await consumer.stop()

    async def commit(self) -> dict[int, int]:
        """Commit what the tracker says is done (after flushing the producer)."""
        from aiokafka import TopicPartition

        done = self.tracker.snapshot()
        fresh = {p: o for p, o in done.items() if o > self._committed.get(p, -1)}
        if not fresh or self._consumer is None:
            return done
        await self._output.flush()
        await self._consumer.commit({TopicPartition(self.topic, p): o for p, o in fresh.items()})
        self._committed.update(fresh)
        return done

    async def dead_letter(self, rec: _Record, reason: str, message: str, index: int | None) -> None:
        self._metrics.dead_letters_total.labels(reason).inc()
        log.debug("dead letter %s/%d@%d: %s", self.topic, rec.partition, rec.offset, message)
        await self._output.dead_letter(
            rec.value, reason, message, f"{self.topic}/{rec.partition}@{rec.offset}", index
        )

    async def _commit_loop(self) -> None:
        while not self._stopping:
            try:
                await asyncio.wait_for(self._stop_event.wait(), self._commit_interval_s)
                return  # stopping: the drain commits once more itself
            except TimeoutError:
                pass
            try:
                await self.commit()
                # A metadata round trip says whether the broker still answers (readyz).
                await asyncio.wait_for(self._consumer.topics(), self._commit_interval_s + 2)
                self.connected = True
            except Exception as exc:  # the next round retries
                if self.connected:
                    log.warning("kafka unreachable (%s); retrying", exc or type(exc).__name__)
                self.connected = False

    async def _run(self) -> None:
        c = self._consumer
        while not self._stopping:
            await self._sequencer.wait_for_room()
            try:
                polled = await c.getmany(timeout_ms=100, max_records=self._fetch_max_records)
            except Exception as exc:  # broker hiccups: aiokafka reconnects; keep polling
                log.warning("kafka poll failed: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if not polled:
                continue
            arrival = time.time()
            parts = []
            records: list[_Record] = []
            pos = 0
            for tp, msgs in polled.items():
                for msg in msgs:
                    self.records += 1
                    dec = decode_record(msg.value, self._max_record_updates)
                    rec = _Record(tp.partition, msg.offset, msg.value or b"", dec.index, pos)
                    for err in dec.errors:
                        await self.dead_letter(rec, err.reason, err.message, err.index)
                    records.append(rec)
                    if len(dec):
                        parts.append(dec.updates)
                        pos += len(dec)
            batch = merge(parts)
            self._sequencer.submit_updates(batch, arrival, _Poll(self, records))
