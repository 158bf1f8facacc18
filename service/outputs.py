"""Kafka output: match frames to ``dcsm.matches`` (keyed by query name, so each query's
deltas stay in order on one partition; a per-delta or per-count frame carries its stable id
in an ``id`` header too) and rejected input to ``dcsm.dead-letter``.

One producer for both. The fan-out never waits on the broker: :meth:`send_frames` appends to
a per-query buffer and returns; one pump task turns whatever has accumulated into record
batches (``create_batch``/``send_batch``), one a partition: the frames of every query the
default partitioner puts on that partition (its name's partition is computed once), each
query's in order. aiokafka keeps one batch in flight per partition, so while one is on the
wire the next grows: the batch size follows the load, a round of the pump waits one round
trip a partition however many queries it carries, and there is no per-frame ``send`` call,
partitioner run or metadata lookup. The buffer is bounded
(``max_buffered_frames``): when the broker falls that far behind, ``send_frames`` waits, and
the backpressure reaches the fan-out and from there the engine. :meth:`flush` returns once
everything handed over so far is acknowledged, which is what offset commits wait for.

A record the producer could not deliver (the broker unreachable past ``request_timeout_ms``
and aiokafka's retries) is never skipped silently: :attr:`lost` is set, and :meth:`flush`
raises :class:`OutputLost` from then on, so no checkpoint (and no offset commit) passes it.
The service stops on ``lost`` without a checkpoint; its restart replays from the last one
and sends those frames again, under the same ids.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from dcsm.errors import DcsmError

from .tasks import cancel_and_wait

log = logging.getLogger("dcsm.service.outputs")


class OutputLost(DcsmError):
    """The broker did not take records handed to the Kafka output."""


class KafkaOutput:
    def __init__(
        self,
        bootstrap: str,
        matches_topic: str,
        dead_letter_topic: str,
        max_buffered_frames: int = 200_000,
        linger_ms: int = 0,
        acks: str = "all",
        client_options: dict[str, Any] | None = None,
        request_timeout_ms: int = 30_000,
    ) -> None:
        """``client_options``: security arguments of the producer (service/kafka_security.py);
        ``request_timeout_ms``: how long a record may wait for the broker before it counts as
        lost (:attr:`lost`)."""
        self._bootstrap = bootstrap
        self._client_options = client_options or {}
        self.matches_topic = matches_topic
        self.dead_letter_topic = dead_letter_topic
        self._max_buffered = max_buffered_frames
        self._producer: Any = None
        self._partition: dict[str, int] = {}
        self._linger_ms = linger_ms
        self._acks: str | int = acks if acks == "all" else int(acks)
        self._pending: dict[str, list[tuple[str, str | None]]] = {}
        self._buffered = 0
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._pump_task: asyncio.Task | None = None
        self._request_timeout_ms = request_timeout_ms
        self.failures = 0  # records the broker did not take
        self.lost = asyncio.Event()  # set at the first of them
        self.lost_reason = ""

    @property
    def buffered(self) -> int:
        """Frames handed over but not yet given to the producer."""
        return self._buffered

    async def start(self) -> None:
        from aiokafka import AIOKafkaProducer

        self._producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            linger_ms=self._linger_ms,
            max_batch_size=1024 * 1024,
            max_request_size=8 * 1024 * 1024,
            request_timeout_ms=self._request_timeout_ms,
            acks=self._acks,
            **self._client_options,
        )
        await self._producer.start()
        self._pump_task = asyncio.create_task(self._pump(), name="dcsm-kafka-out")

    async def stop(self) -> None:
        if self._producer is None:
            return
        with contextlib.suppress(OutputLost):  # reported when it happened (``lost``)
            await self.flush()
        if self._pump_task is not None:
            await cancel_and_wait([self._pump_task])
        producer, self._producer = self._producer, None
        await producer.stop()

    def _check(self, fut: Any) -> None:
        if fut.cancelled() or fut.exception() is not None:
            self._lose(1, "cancelled" if fut.cancelled() else fut.exception())

    def _lose(self, records: int, why: object) -> None:
        """``records`` were not delivered: counted, logged, and :attr:`lost` set."""
        self.failures += records
        if not self.lost.is_set():
            self.lost_reason = str(why) or type(why).__name__
            self.lost.set()
        log.error("kafka output: %d record(s) not delivered: %s", records, why)

    async def send_frames(self, key: str, frames: list[str], ids: list[str] | None) -> None:
        """Queue each frame as one record on the matches topic, keyed by ``key``, in order;
        ``ids[i]`` (if given) goes into frame i's ``id`` header."""
        if not frames:
            return
        while self._buffered >= self._max_buffered:
            self._room.clear()
            await self._room.wait()
        rows = zip(frames, ids, strict=True) if ids is not None else ((f, None) for f in frames)
        self._pending.setdefault(key, []).extend(rows)
        self._buffered += len(frames)
        self._idle.clear()
        self._wake.set()

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                pending, self._pending = self._pending, {}
                by_partition: dict[int, list[tuple[str, list[tuple[str, str | None]]]]] = {}
                for key, frames in pending.items():
                    try:
                        part = await self._partition_of(key)
                    except Exception as exc:  # no metadata: lost (module docstring)
                        self._lose(len(frames), exc)
                        self._sent(len(frames))
                        continue
                    by_partition.setdefault(part, []).append((key, frames))
                for part, queries in by_partition.items():
                    await self._send(part, queries)
                    self._sent(sum(len(frames) for _, frames in queries))
            self._idle.set()

    def _sent(self, frames: int) -> None:
        """``frames`` left the buffer (handed to the producer, or counted lost)."""
        self._buffered -= frames
        self._room.set()

    async def _partition_of(self, key: str) -> int:
        part = self._partition.get(key)
        if part is None:
            from aiokafka.partitioner import DefaultPartitioner

            parts = sorted(await self._producer.partitions_for(self.matches_topic))
            part = self._partition[key] = DefaultPartitioner()(key.encode(), parts, parts)
        return part

    async def _send(
        self, part: int, queries: list[tuple[str, list[tuple[str, str | None]]]]
    ) -> None:
        """The frames of ``queries`` ((key, frames) in turn) as record batches on ``part``:
        as few as the batch size allows (a first record always fits). Those the producer
        did not take count as lost (module docstring); those it took are its to deliver."""
        handed = 0
        try:
            batch = self._producer.create_batch()
            for key, frames in queries:
                k = key.encode()
                for text, fid in frames:
                    value = text.encode()
                    headers = [("id", fid.encode())] if fid is not None else []
                    if batch.append(key=k, value=value, timestamp=None, headers=headers) is None:
                        await self._send_batch(batch, part)  # the batch is full
                        handed += batch.record_count()
                        batch = self._producer.create_batch()
                        batch.append(key=k, value=value, timestamp=None, headers=headers)
            await self._send_batch(batch, part)
        except Exception as exc:
            self._lose(sum(len(frames) for _, frames in queries) - handed, exc)

    async def _send_batch(self, batch: Any, partition: int) -> None:
        """Hand ``batch`` to the producer, waiting up to ``request_timeout_ms`` for room on
        the partition. aiokafka's own wait (``add_batch``) subtracts the time since it began
        once per turn, so under broker retries it gives up well before its timeout; it
        raises before queuing anything, so asking again is safe."""
        from aiokafka.errors import KafkaTimeoutError

        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._request_timeout_ms / 1000
        while True:
            try:
                fut = await self._producer.send_batch(
                    batch, self.matches_topic, partition=partition
                )
                break
            except KafkaTimeoutError:
                if loop.time() >= deadline:
                    raise
                await asyncio.sleep(0.01)
        fut.add_done_callback(self._check)

    async def dead_letter(
        self, value: bytes, reason: str, message: str, source: str, index: int | None
    ) -> None:
        """The original record bytes, with why and where in headers."""
        headers = [
            ("reason", reason.encode()),
            ("error", message.encode()[:4096]),
            ("source", source.encode()),
        ]
        if index is not None:
            headers.append(("index", str(index).encode()))
        fut = await self._producer.send(self.dead_letter_topic, value, headers=headers)
        fut.add_done_callback(self._check)

    async def produce(self, topic: str, value: bytes, headers: list[tuple[str, bytes]]) -> Any:
        """One record, acknowledged by the broker (``acks``) before this returns; its
        RecordMetadata. (HTTP-ingested updates go through the input topic this way.)"""
        fut = await self._producer.send(topic, value, headers=headers)
        return await fut

    async def flush(self) -> None:
        """Wait until every frame handed over so far is acknowledged by the broker; raise
        :class:`OutputLost` if any record ever handed over was not."""
        if self._producer is not None:
            await self._idle.wait()
            await self._producer.flush()
        if self.failures:
            raise OutputLost(
                f"{self.failures} record(s) were not delivered to Kafka ({self.lost_reason})"
            )
