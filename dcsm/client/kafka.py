"""Kafka input: :class:`UpdateProducer` sends updates to the service's input topic as the
records it decodes, encoded by :func:`encode_record` (:mod:`dcsm.service.codec`'s encoders)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from dcsm.client.models import RecordEncoding, UpdatesLike

log = logging.getLogger("dcsm.client")

if TYPE_CHECKING:
    from dcsm.model import UpdateBatch

#: AIOKafkaProducer options :class:`UpdateProducer` starts from: no linger (a record is already
#: a batch of updates), records and batches large enough for 10,000-update binary records.
PRODUCER_OPTIONS: dict[str, Any] = {
    "linger_ms": 0,
    "max_request_size": 16 * 1024 * 1024,
    "max_batch_size": 1024 * 1024,
}


def encode_record(
    updates: UpdatesLike, encoding: RecordEncoding = "binary", ts: np.ndarray | None = None
) -> bytes:
    """One input record of ``updates`` in ``encoding`` (``binary``: a binary batch; ``json``:
    a JSON array of EdgeUpdate objects), exactly what the service's ingest decodes. ``ts``:
    float64 (n,) producer times (epoch seconds; the service reports them as ``arrival_ts``)."""
    from dcsm.service.codec import encode_binary, encode_json

    batch = _as_update_batch(updates)
    if encoding == "binary":
        return encode_binary(batch, ts)
    if encoding == "json":
        return encode_json(batch, ts)
    raise ValueError(f"encoding must be binary or json, got {encoding!r}")


def _as_update_batch(updates: UpdatesLike) -> UpdateBatch:
    from dcsm.model import UpdateBatch
    from dcsm.schemas import EdgeUpdate, to_batch

    if isinstance(updates, UpdateBatch):
        return updates
    models = [u if isinstance(u, EdgeUpdate) else EdgeUpdate.model_validate(u) for u in updates]
    return to_batch(models, 0, np.array([u.ts or 0.0 for u in models], np.float64))


class DeliveryError(RuntimeError):
    """Records the broker never acknowledged (``failed`` of them; ``first``: the first
    error): raised by :meth:`UpdateProducer.flush` and :meth:`UpdateProducer.stop`."""

    def __init__(self, failed: int, first: BaseException) -> None:
        super().__init__(f"{failed} record(s) sent were not delivered: {first!r}")
        self.failed, self.first = failed, first


class UpdateProducer:
    """Sends updates to the service's input topic (aiokafka underneath).

    ``send(updates)`` encodes them as records of at most ``max_record_updates`` updates each
    (the service's ``--max-record-updates`` must be as large) in ``encoding``; ``send_value``
    sends a record encoded already (:func:`encode_record`). ``options`` go to
    AIOKafkaProducer over :data:`PRODUCER_OPTIONS` (e.g. ``acks``). Records are delivered in
    order; ``flush()`` (and ``stop()``) wait for everything sent, and raise
    :class:`DeliveryError` if any record sent since the last of them was not delivered: a
    record the broker refused is never dropped unseen.

    Example::

        async with UpdateProducer("127.0.0.1:9092", encoding="json") as p:
            await p.send([{"op": "insert", "u": 1, "v": 2}])
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str = "dcsm.updates",
        *,
        encoding: RecordEncoding = "binary",
        max_record_updates: int = 10_000,
        **options: Any,
    ) -> None:
        if encoding not in ("binary", "json"):
            raise ValueError(f"encoding must be binary or json, got {encoding!r}")
        self.bootstrap = bootstrap
        self.topic = topic
        self.encoding: RecordEncoding = encoding
        self.max_record_updates = max_record_updates
        self.options = PRODUCER_OPTIONS | options
        self._producer: Any = None
        self._inflight: set[asyncio.Future[Any]] = set()  # delivery futures not yet done
        self._failures: list[BaseException] = []  # since the last flush() or stop()

    async def start(self) -> UpdateProducer:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, **self.options)
        await producer.start()
        self._producer = producer
        return self

    async def stop(self) -> None:
        """Deliver what was sent, then close; :class:`DeliveryError` if any record failed."""
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()
            await self._settle()

    async def send(
        self, updates: UpdatesLike, *, ts: np.ndarray | None = None, wait: bool = False
    ) -> int:
        """Encode and send ``updates`` (``ts``: float64 (n,) producer times); the number of
        records. ``wait``: return once the broker has acknowledged them."""
        batch = _as_update_batch(updates)
        futures = []
        step = self.max_record_updates
        for a in range(0, len(batch), step):
            b = min(a + step, len(batch))
            value = encode_record(batch.slice(a, b), self.encoding, None if ts is None else ts[a:b])
            futures.append(await self.send_value(value))
        if wait:
            await self._settle()  # delivery is in order: these and everything before them
        return len(futures)

    async def send_value(self, value: bytes, topic: str | None = None) -> Any:
        """Send one encoded record (to ``topic``, default this producer's); the delivery
        future."""
        if self._producer is None:
            raise RuntimeError("UpdateProducer.start() first")
        fut = await self._producer.send(topic or self.topic, value)
        self._inflight.add(fut)
        fut.add_done_callback(self._delivered)
        return fut

    async def flush(self) -> None:
        """Wait until every record sent is delivered; :class:`DeliveryError` if any failed."""
        if self._producer is not None:
            await self._producer.flush()
        await self._settle()

    def _delivered(self, fut: asyncio.Future[Any]) -> None:
        self._inflight.discard(fut)
        if fut.cancelled():
            self._failures.append(asyncio.CancelledError("delivery cancelled"))
        elif (exc := fut.exception()) is not None:
            self._failures.append(exc)

    async def _settle(self) -> None:
        """Wait for the delivery futures still open, then raise the failures seen."""
        if self._inflight:
            await asyncio.wait(list(self._inflight))
        if self._failures:
            failures, self._failures = self._failures, []
            raise DeliveryError(len(failures), failures[0])

    async def __aenter__(self) -> UpdateProducer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        try:
            await self.stop()
        except DeliveryError as err:
            if exc[0] is None:
                raise
            log.error("%s (while leaving on %r)", err, exc[1])  # that error goes on up
