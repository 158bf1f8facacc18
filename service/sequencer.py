"""The one global sequence: every update from HTTP and Kafka, and every query registration,
gets its place in the engine's order here.

All methods run on the event loop thread and never await between taking a seq and enqueueing
the command, so seq order, engine order and fan-out order are one and the same. Admission is
bounded in updates (``max_queued``): ingest awaits :meth:`wait_for_room` and the fan-out
releases room once it has emitted a batch's deltas.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import numpy as np

from dcsm.model import Pattern, UpdateBatch

from .engine_worker import Apply, Barrier, EngineWorker, Export, Register, Unregister


class Sequencer:
    def __init__(self, worker: EngineWorker, next_seq: int, max_queued: int) -> None:
        self._worker = worker
        self._next_seq = next_seq
        self._max_queued = max_queued
        self._queued = 0
        self._room = asyncio.Event()
        self._room.set()

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def queued(self) -> int:
        """Updates admitted whose deltas are not yet emitted."""
        return self._queued

    async def wait_for_room(self) -> None:
        """Return once fewer than ``max_queued`` updates are in flight."""
        while self._queued >= self._max_queued:
            self._room.clear()
            await self._room.wait()

    def release(self, n: int) -> None:
        """The fan-out emitted ``n`` updates' worth of output."""
        self._queued -= n
        if self._queued < self._max_queued:
            self._room.set()

    def submit_updates(self, batch: UpdateBatch, arrival: float | np.ndarray, origin: Any) -> int:
        """Give ``batch`` (seq/ts placeholders) seqs and arrival times and enqueue it; returns
        the first seq. An empty batch still travels, carrying ``origin`` (e.g. the offset of a
        record that was all dead letters) through the pipeline in order."""
        n = len(batch)
        first = self._next_seq
        stamped = dataclasses.replace(
            batch,
            seq=np.arange(first, first + n, dtype=np.int64),
            ts=np.broadcast_to(np.asarray(arrival, np.float64), (n,)).copy(),
        )
        self._next_seq += n
        self._queued += n
        self._worker.submit(Apply(stamped, origin))
        return first

    def submit_register(
        self, qid: int, pattern: Pattern, count_only: bool, backfill: bool, reply: Any
    ) -> int:
        """Register from the next seq on; returns that seq."""
        from_seq = self._next_seq
        self._worker.submit(Register(qid, pattern, from_seq, count_only, backfill, reply))
        return from_seq

    def submit_unregister(self, qid: int, reply: Any) -> int:
        from_seq = self._next_seq
        self._worker.submit(Unregister(qid, from_seq, reply))
        return from_seq

    def submit_export(self, reply: Any) -> int:
        at = self._next_seq
        self._worker.submit(Export(at, reply))
        return at

    def submit_barrier(self, reply: Any) -> None:
        self._worker.submit(Barrier(reply))
