"""Websocket relay between replicas: a subscriber on any replica gets all of its query's
frames, those other replicas emit included, read back from ``dcsm.matches``.

Each frame on the matches topic is one record keyed by its query. A replica relays the
frames it did not emit itself: in shard mode ``queries`` every frame of a query another
replica owns (its stored owner, ``QueryState.replica``); in shard mode ``updates`` every
frame whose (first) seq is not in its share (a frame holds the rows of one replica's seqs
only, backfill included). It offers them to the query's own-kind subscribers (and the
pending queue of the first one) whose encoding is the query's topic encoding: a relayed
frame exists in that encoding only. A frame whose seq is below the query's ``from_seq`` is an
earlier query's of the same name (deleted, its name taken again) and is not relayed.

The consumer reads from the topic's end at start, with no group (nothing to commit): like
the fan-out's own frames, relayed frames are live, not replayed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson

from .queries import QueryCatalog, QueryState
from .replicas import Sharding
from .tasks import cancel_and_wait

log = logging.getLogger("dcsm.service.relay")


class MatchesRelay:
    def __init__(
        self,
        bootstrap: str,
        topic: str,
        catalog: QueryCatalog,
        sharding: Sharding,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self._bootstrap = bootstrap
        self._topic = topic
        self._catalog = catalog
        self._sharding = sharding
        self._client_options = client_options or {}
        self._consumer: Any = None
        self._task: asyncio.Task | None = None
        self.relayed = 0

    async def start(self) -> None:
        from aiokafka import AIOKafkaConsumer, TopicPartition

        from .ingest import partitions

        c = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap, enable_auto_commit=False, fetch_max_wait_ms=5,
            **self._client_options,
        )  # fmt: skip
        await c.start()
        self._consumer = c
        tps = [TopicPartition(self._topic, p) for p in sorted(await partitions(c, self._topic))]
        c.assign(tps)
        await c.seek_to_end(*tps)
        self._task = asyncio.create_task(self._run(), name="dcsm-relay")

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])
            self._task = None
        if self._consumer is not None:
            c, self._consumer = self._consumer, None
            await c.stop()

    async def _run(self) -> None:
        c = self._consumer
        while True:
            try:
                polled = await c.getmany(timeout_ms=200)
            except Exception as exc:  # broker hiccups: aiokafka reconnects
                log.warning("relay poll failed: %s", exc)
                await asyncio.sleep(0.5)
                continue
            for msgs in polled.values():
                for msg in msgs:
                    self._offer(msg.key, msg.value)
            await asyncio.sleep(0)

    def _offer(self, key: bytes | None, value: bytes | None) -> None:
        if not key or not value:
            return
        st = self._catalog.find(key.decode(errors="replace"))
        if st is None or st.closing or not self._foreign(st, value):
            return
        subs = st.subscribers if st.mode == "embeddings" else st.count_subscribers
        targets = [s for s in subs if s.encoding == st.encoding]
        if st.pending is not None and st.pending.encoding == st.encoding:
            targets.append(st.pending)
        text = value.decode()
        for sub in targets:
            sub.offer_many([text])
        self.relayed += 1

    def _foreign(self, st: QueryState, value: bytes) -> bool:
        """Whether another replica emitted this frame of ``st`` (not one of an earlier,
        deleted query of that name: its seq is below ``st.from_seq``)."""
        sh = self._sharding
        if sh.mode == "queries" and sh.owns_query(st.replica):
            return False  # parsed only when it may be another's
        seq = _first_seq(value)
        if seq is None:
            return sh.mode == "queries"
        return seq >= st.from_seq and (sh.mode == "queries" or not sh.owns_seq(seq))


def _first_seq(value: bytes) -> int | None:
    """The seq of a frame (of its first row, for a batch frame); None if it has none."""
    try:
        body = orjson.loads(value)
    except orjson.JSONDecodeError:
        return None
    seq = body.get("seq") if isinstance(body, dict) else None
    if isinstance(seq, list):
        seq = seq[0] if seq else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None
