"""Kafka output: match frames to ``dcsm.matches`` (keyed by query name, so each query's
deltas stay in order on one partition) and rejected input to ``dcsm.dead-letter``.

One producer for both. ``send`` only waits when the producer's buffer is full (backpressure
from the broker reaches the fan-out, and from there the engine); :meth:`flush` waits until
everything sent so far is acknowledged, which is what offset commits wait for.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("dcsm.service.outputs")


class KafkaOutput:
    def __init__(self, bootstrap: str, matches_topic: str, dead_letter_topic: str) -> None:
        self._bootstrap = bootstrap
        self.matches_topic = matches_topic
        self.dead_letter_topic = dead_letter_topic
        self._producer: Any = None
        self.failures = 0

    async def start(self) -> None:
        from aiokafka import AIOKafkaProducer

        self._producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            linger_ms=1,
            max_batch_size=256 * 1024,
            max_request_size=8 * 1024 * 1024,
            request_timeout_ms=30_000,
        )
        await self._producer.start()

    async def stop(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()  # flushes pending sends

    def _check(self, fut: Any) -> None:
        if fut.cancelled() or fut.exception() is not None:
            self.failures += 1
            log.error(
                "kafka delivery failed: %s", fut.exception() if not fut.cancelled() else "cancelled"
            )

    async def send_frames(self, key: str, frames: list[str]) -> None:
        """Each frame as one record on the matches topic, keyed by ``key``."""
        k = key.encode()
        send = self._producer.send
        fut = None
        for f in frames:
            fut = await send(self.matches_topic, f.encode(), key=k)
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

    async def flush(self) -> None:
        if self._producer is not None:
            await self._producer.flush()
