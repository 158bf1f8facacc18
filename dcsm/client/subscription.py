"""Websocket subscriptions: :class:`Subscription` (a query's match or count stream as an
async iterator of rows or of numpy batches, deduplicated by stable id, reconnecting across
service restarts) and :func:`parse_frame` (one frame of either encoding as an item)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from dcsm.client.models import (
    ApiError,
    BatchItem,
    Count,
    CountBatch,
    Delta,
    DeltaBatch,
    End,
    FrameEncoding,
    Gap,
    Item,
    Row,
)

if TYPE_CHECKING:
    from dcsm.client.http import AsyncClient

#: Websocket close codes the service uses (see ``service/api.py``).
WS_CLOSE_NOT_FOUND = 4404
WS_CLOSE_WRONG_KIND = 4409
WS_CLOSE_POLICY = 1008  # no or a wrong token


def _ids(text: str) -> np.ndarray:
    """The batch encoding's ``ids`` (16 hex digits per row) as uint64 (k,)."""
    return np.frombuffer(bytes.fromhex(text), ">u8").astype(np.uint64)


def parse_frame(
    text: str | bytes, received_at: float
) -> Row | DeltaBatch | CountBatch | Gap | End | None:
    """One websocket frame (either encoding) as an item; None for a frame type this client
    does not know (a newer service's)."""
    f: dict[str, Any] = orjson.loads(text)
    kind = f.get("type")
    backfill = bool(f.get("backfill", False))
    if kind is None:
        return Delta(
            f["query"],
            int(f["sign"]),
            int(f["seq"]),
            tuple(f["match"]),
            f["id"],
            float(f["arrival_ts"]),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "count":
        return Count(
            f["query"],
            int(f["sign"]),
            int(f["seq"]),
            int(f["count"]),
            f["id"],
            float(f["arrival_ts"]),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "deltas":
        seq = np.asarray(f["seq"], np.int64)
        match = np.asarray(f["match"], np.int64).reshape(len(seq), -1)
        return DeltaBatch(
            f["query"],
            seq,
            np.asarray(f["sign"], np.int8),
            match,
            _ids(f["ids"]),
            np.asarray(f["arrival_ts"], np.float64),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "counts":
        return CountBatch(
            f["query"],
            np.asarray(f["seq"], np.int64),
            np.asarray(f["sign"], np.int8),
            np.asarray(f["count"], np.int64),
            _ids(f["ids"]),
            np.asarray(f["arrival_ts"], np.float64),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "gap":
        return Gap(int(f.get("dropped", 0)))
    if kind == "end":
        return End(str(f.get("reason", "")))
    return None


def _as_batch(row: Row) -> DeltaBatch | CountBatch:
    seq = np.array([row.seq], np.int64)
    sign = np.array([row.sign], np.int8)
    ids = _ids(row.id)
    arrival = np.array([row.arrival_ts], np.float64)
    if isinstance(row, Delta):
        match = np.array([row.match], np.int64)
        return DeltaBatch(
            row.query, seq, sign, match, ids, arrival, row.emitted_ts, row.received_at, row.backfill
        )
    return CountBatch(
        row.query,
        seq,
        sign,
        np.array([row.count], np.int64),
        ids,
        arrival,
        row.emitted_ts,
        row.received_at,
        row.backfill,
    )


class _Seen:
    """The ids of the last ``window`` rows (a set plus their order, oldest evicted first)."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.ids: set[int] = set()
        self.order: deque[int] = deque()

    def first_time(self, ids: list[int]) -> list[bool]:
        out = []
        seen, order = self.ids, self.order
        for i in ids:
            new = i not in seen
            out.append(new)
            if new:
                seen.add(i)
                order.append(i)
        while len(order) > self.window:
            seen.discard(order.popleft())
        return out


class Subscription:
    """A query's websocket as an async iterator.

    ``async for item in sub`` yields :class:`Delta` or :class:`Count` rows, :class:`Gap`
    and :class:`End` (the last item); :meth:`batches` yields whole frames as
    :class:`DeltaBatch` / :class:`CountBatch` columns instead. Each row comes once
    (``dedupe``: by id, over the last ``dedupe_window`` rows); ``duplicates`` counts those
    dropped, ``reconnects`` the reconnections. Use one iterator per subscription;
    ``close()`` (or leaving ``async with``) ends it."""

    def __init__(
        self,
        client: AsyncClient,
        name: str,
        *,
        counts: bool | None,
        encoding: FrameEncoding | None,
        dedupe: bool,
        reconnect: bool,
        reconnect_timeout_s: float,
        queue_frames: int | None,
        dedupe_window: int = 1_000_000,
    ) -> None:
        self.client = client
        self.name = name
        self.counts = counts
        self.encoding = encoding
        self.reconnect = reconnect
        self.reconnect_timeout_s = reconnect_timeout_s
        self.queue_frames = queue_frames
        self._seen = _Seen(dedupe_window) if dedupe else None
        self.duplicates = 0
        self.reconnects = 0
        self._ws: Any = None
        self._closed = False
        self._open = asyncio.Event()

    async def _url(self) -> str:
        if self.counts is None or self.encoding is None:
            q = await self.client.get_query(self.name)
            self.counts = q.mode == "count" if self.counts is None else self.counts
            self.encoding = self.encoding or q.encoding
        kind = "counts" if self.counts else "matches"
        params = [f"encoding={self.encoding}"]
        if self.queue_frames:
            params.append(f"queue={self.queue_frames}")
        return f"{self.client.ws_url}/api/v1/queries/{self.name}/{kind}?{'&'.join(params)}"

    async def _frames(self) -> AsyncIterator[tuple[str | bytes, float]]:
        """Raw frames with their receive times, across reconnections, until the end frame
        (or a close without one, when not reconnecting)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        url = await self._url()
        down_since: float | None = None
        while not self._closed:
            try:
                async with connect(
                    url,
                    proxy=None,
                    compression=None,
                    max_size=None,
                    open_timeout=10,
                    additional_headers=self.client.ws_headers,
                ) as ws:
                    self._ws = ws
                    self._open.set()
                    if down_since is not None:
                        self.reconnects += 1
                    down_since = None
                    async for text in ws:
                        yield text, time.time()
                        if self._closed:
                            return
                    _raise_close(ws.close_code, ws.close_reason or "", self.name)
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                _raise_close(code, exc.rcvd.reason if exc.rcvd else "", self.name)
            except (OSError, InvalidHandshake, TimeoutError):
                if not self.reconnect:
                    raise
            finally:
                self._ws = None
                self._open.clear()
            if not self.reconnect or self._closed:
                return
            now = time.monotonic()
            down_since = down_since or now
            if now - down_since > self.reconnect_timeout_s:
                raise ConnectionError(
                    f"websocket of query {self.name!r}: no connection for "
                    f"{self.reconnect_timeout_s:g} s"
                )
            await asyncio.sleep(0.2)

    async def wait_open(self, timeout_s: float = 30.0) -> None:
        """Wait until the websocket is open (an iterator of this subscription must be
        running); what the service emits from then on reaches it."""
        await asyncio.wait_for(self._open.wait(), timeout_s)

    async def batches(self) -> AsyncIterator[BatchItem]:
        """Whole frames as columns (a json-encoded row comes as a batch of one)."""
        async for text, received_at in self._frames():
            item = parse_frame(text, received_at)
            if item is None:
                continue
            if isinstance(item, Delta | Count):
                item = _as_batch(item)
            if isinstance(item, DeltaBatch | CountBatch) and self._seen is not None:
                keep = np.asarray(self._seen.first_time(item.ids.tolist()), bool)
                if not keep.all():
                    self.duplicates += int((~keep).sum())
                    if not keep.any():
                        continue
                    item = item.take(keep)
            yield item
            if isinstance(item, End):
                return

    async def _rows(self) -> AsyncIterator[Item]:
        seen = self._seen
        async for text, received_at in self._frames():
            item = parse_frame(text, received_at)
            if item is None:
                continue
            rows: Iterator[Item]
            if isinstance(item, DeltaBatch | CountBatch):
                rows = item.rows()
            else:
                rows = iter((item,))
            for row in rows:
                if seen is not None and isinstance(row, Delta | Count):
                    if not seen.first_time([int(row.id, 16)])[0]:
                        self.duplicates += 1
                        continue
                yield row
            if isinstance(item, End):
                return

    def __aiter__(self) -> AsyncIterator[Item]:
        return self._rows()

    async def close(self) -> None:
        self._closed = True
        if self._ws is not None:
            await self._ws.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _raise_close(code: int | None, reason: str, name: str) -> None:
    if code == WS_CLOSE_NOT_FOUND:
        raise ApiError(404, "not_found", reason or f"query {name!r} not found")
    if code == WS_CLOSE_WRONG_KIND:
        raise ApiError(409, "wrong_kind", reason or f"query {name!r}: wrong stream")
    if code == WS_CLOSE_POLICY:
        raise ApiError(401, "unauthenticated", reason or "the service refused the token")
