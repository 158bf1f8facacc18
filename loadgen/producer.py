"""The one paced Kafka producer: records sent at given times, open loop.

A workload is laid out before it is sent: :func:`arrival_offsets` draws each update's due
time (seconds after a start ``t0``), :func:`layout` groups the updates due in the same
``window_s`` into one record (sent when its last update is due, as a batching producer would)
and :meth:`Layout.stamp` encodes every record up front, each update stamped with its own
scheduled time as ``ts``
(the service reports that as the update's ``arrival_ts``, so latency counts from when the
update *should* have gone out: a producer that falls behind cannot hide queueing). Then
:func:`send_paced` only hands ready bytes to a :class:`dcsm.client.UpdateProducer` at their
times, so encoding never limits the send rate. The encodings themselves are
:mod:`dcsm.service.codec`'s. ``dcsm loadgen`` (through :mod:`dcsm.loadgen.pool`, one such sender per
process), ``dcsm demo`` and the restart test all send this way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.client import UpdateProducer
from dcsm.model import UpdateBatch
from dcsm.service.codec import close_rows, encode_binary, json_rows


@dataclass(frozen=True)
class Records:
    """Encoded records ready to send: ``values[i]`` is due ``send_at[i]`` seconds after t0
    (float64 (r,), non-decreasing) and carries ``sizes[i]`` updates (int64 (r,))."""

    values: list[bytes]
    send_at: np.ndarray
    sizes: np.ndarray

    def __len__(self) -> int:
        return len(self.values)

    def take(self, which: np.ndarray) -> Records:
        """The records at positions ``which`` (int array), in that order."""
        idx = which.tolist()
        return Records([self.values[i] for i in idx], self.send_at[which], self.sizes[which])


@dataclass(frozen=True)
class SendReport:
    """What one paced sender did: ``updates`` in ``records``; epoch seconds of the first
    send and of the end of the final flush; the most it ever ran behind its schedule."""

    updates: int
    records: int
    t_first: float
    t_done: float
    max_late_s: float


def arrival_offsets(n: int, rate: float, seed: int) -> np.ndarray:
    """Due times of ``n`` updates at ``rate``/s, seconds after t0 (float64 (n,)).

    Exponential inter-arrival times (a Poisson stream), rescaled so their mean is exactly
    ``1/rate``: the last update is due at ``n / rate``, so the nominal send rate is exactly
    ``rate`` whatever the draw (an unscaled draw of a few hundred gaps is easily 5 % off).
    """
    if n <= 0:
        return np.zeros(0)
    gaps = np.random.default_rng(seed).exponential(1.0, n)
    return np.cumsum(gaps) * (n / rate / gaps.sum())


def window_bounds(offsets: np.ndarray, window_s: float, max_updates: int) -> np.ndarray:
    """Record boundaries (int64 (r+1,), from 0 to n): updates whose due times fall in the
    same ``window_s`` slot share a record, at most ``max_updates`` of them; a window of 0
    (no linger) gives each update its own record."""
    n = len(offsets)
    if n == 0:
        return np.zeros(1, np.int64)
    if window_s <= 0:
        return np.arange(n + 1, dtype=np.int64)
    slot = np.floor(offsets / window_s).astype(np.int64)
    bounds = np.r_[np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]]), n]
    big = np.flatnonzero(np.diff(bounds) > max_updates)
    if len(big):  # split oversize windows
        cuts = [np.arange(bounds[i] + max_updates, bounds[i + 1], max_updates) for i in big]
        bounds = np.unique(np.concatenate([bounds, *cuts]))
    return bounds.astype(np.int64)


@dataclass(frozen=True)
class Layout:
    """A workload cut into records, encoded as far as it can be before t0 is known.

    ``offsets``: float64 (n,), each update's due time after t0; ``bounds``: int64 (r+1,),
    record boundaries; ``rows``: the JSON encoding's per-update text (None for binary, whose
    records are cheap to build once t0 is known)."""

    batch: UpdateBatch
    offsets: np.ndarray
    bounds: np.ndarray
    encoding: str
    rows: list[str] | None

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def stamp(self, t0: float | None, records: int | None = None) -> Records:
        """The records (the first ``records`` of them; default all), each update with
        ``ts = t0 + offsets[i]`` (epoch seconds; None: no ``ts``, the service then takes the
        Kafka record time)."""
        r = len(self) if records is None else min(records, len(self))
        lo, hi = self.bounds[:r].tolist(), self.bounds[1 : r + 1].tolist()
        ts = None if t0 is None else t0 + self.offsets
        if self.rows is None:
            values = [
                encode_binary(self.batch.slice(a, b), None if ts is None else ts[a:b])
                for a, b in zip(lo, hi, strict=True)
            ]
        else:
            rows = self.rows[: hi[-1] if hi else 0]
            items = close_rows(rows, None if ts is None else ts[: len(rows)].tolist())
            values = [
                ("[" + ",".join(items[a:b]) + "]").encode() for a, b in zip(lo, hi, strict=True)
            ]
        ends = self.bounds[1 : r + 1]
        send_at = self.offsets[ends - 1] if r else np.zeros(0)
        return Records(values, send_at.astype(np.float64), np.diff(self.bounds[: r + 1]))


def layout(
    batch: UpdateBatch,
    offsets: np.ndarray,
    encoding: str,
    window_s: float = 0.001,
    max_updates: int = 10_000,
    bounds: np.ndarray | None = None,
) -> Layout:
    """Cut ``batch`` (n updates due at ``offsets``, float64 (n,), seconds after t0) into
    records of the updates due in each ``window_s`` slot (at most ``max_updates``), or at the
    given ``bounds`` (int64 (r+1,)), and encode what does not depend on t0. ``encoding``:
    ``binary`` (one binary batch per record, see :mod:`dcsm.service.codec`) or ``json`` (a
    JSON array of EdgeUpdate objects).
    """
    if encoding not in ("binary", "json"):
        raise ValueError(f"encoding must be binary or json, got {encoding!r}")
    if bounds is None:
        bounds = window_bounds(offsets, window_s, max_updates)
    rows = json_rows(batch) if encoding == "json" else None
    return Layout(batch, np.asarray(offsets, np.float64), np.asarray(bounds), encoding, rows)


async def send_paced(
    producer: UpdateProducer,
    topic: str,
    values: Sequence[bytes],
    send_at: np.ndarray,
    *,
    sizes: np.ndarray | None = None,
    on_sent: Callable[[int], None] | None = None,
) -> SendReport:
    """Hand ``values[i]`` to ``producer`` (started) once the clock reaches
    ``send_at[i]`` (float64 (r,), epoch seconds, non-decreasing); everything overdue goes at
    once. Flushes at the end. ``on_sent(k)``: called with the updates sent so far
    (``sizes``: updates per record, default 1)."""
    r = len(values)
    counts = np.cumsum(sizes) if sizes is not None else np.arange(1, r + 1)
    sent, late, t_first = 0, 0.0, None
    while sent < r:
        now = time.time()
        due = int(np.searchsorted(send_at, now, side="right"))
        if due > sent:
            t_first = now if t_first is None else t_first
            late = max(late, now - float(send_at[sent]))
            for i in range(sent, due):
                await producer.send_value(values[i], topic)
            sent = due
            if on_sent is not None:
                on_sent(int(counts[sent - 1]))
        else:
            # asyncio wakes about a millisecond late at best; what is due by then goes together.
            await asyncio.sleep(min(0.05, float(send_at[sent]) - now))
    await producer.flush()
    t_done = time.time()
    total = int(counts[-1]) if r else 0
    return SendReport(total, r, t_first if t_first is not None else t_done, t_done, late)


async def produce_paced(
    bootstrap: str,
    topic: str,
    values: Sequence[bytes],
    send_at: np.ndarray,
    *,
    sizes: np.ndarray | None = None,
    on_sent: Callable[[int], None] | None = None,
    **options: Any,
) -> SendReport:
    """:func:`send_paced` with a producer of its own (``options``: AIOKafkaProducer options
    over :data:`dcsm.client.PRODUCER_OPTIONS`), started before and stopped after."""
    async with UpdateProducer(bootstrap, topic, **options) as producer:
        return await send_paced(producer, topic, values, send_at, sizes=sizes, on_sent=on_sent)
