"""The one global sequence: every update from any input, and every registration,
unregistration, checkpoint and barrier, gets its place in the engine's order here.

Updates get their seqs the moment they are submitted (an HTTP request learns its seqs at
once). A control command takes a *slot* at a seq: it runs after every update before that seq
and before every update from it on. A slot may be reserved before its command exists (a
registration reserves its ``from_seq``, logs itself durably, then fills the slot): updates
from that seq on are held back until the slot is filled, so a logged ``from_seq`` is always
the exact place the engine sees the registration, in the first run and in a replay.

Slots are kept in seq order. A registration never takes a seq before an earlier one (its seq
is at least the last slot's), so the query log's order is the engine's order; checkpoints
record how many log entries the engine has seen (``log_entries``).

All methods run on the event loop thread and never await, so seq order, engine order and
fan-out order are one and the same. Admission is bounded in updates (``max_queued``): ingest
awaits :meth:`wait_for_room`, and the fan-out releases room once a batch's output is out.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from dcsm.model import UpdateBatch

from .messages import (
    Apply,
    Barrier,
    Command,
    Control,
    Export,
    Origin,
    Positions,
    Register,
    Unregister,
)


@dataclass(slots=True)
class Slot:
    """A control command's place: it runs before the update with seq ``seq``."""

    seq: int
    cmd: Control | None = None  # None: reserved, not filled yet (holds updates >= seq back)


class _Pieces:
    """One origin whose batch was cut by control slots: settled once, with every piece's
    seqs and outcomes, when the last piece is through (pieces settle in order)."""

    def __init__(self, origin: Origin, pieces: int) -> None:
        self._origin = origin
        self._left = pieces
        self._seq: list[np.ndarray] = []
        self._outcome: list[np.ndarray] = []
        self._failed = False

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        self._seq.append(seq)
        self._outcome.append(outcome)
        await self._one_done()

    async def fail(self, error: BaseException) -> None:
        if not self._failed:
            self._failed = True
            await self._origin.fail(error)
        await self._one_done()

    async def _one_done(self) -> None:
        self._left -= 1
        if self._left == 0 and not self._failed:
            await self._origin.settle(np.concatenate(self._seq), np.concatenate(self._outcome))


class Sequencer:
    """Args:
    submit: hands one command to the engine thread (``EngineWorker.submit``).
    next_seq: the seq the next update gets.
    max_queued: most updates admitted whose output is not yet out before ingest waits.
    max_chunk: most updates in one command to the engine: a larger batch (a big poll) is
        handed in pieces, so its first updates do not wait for its last ones.
    log_entries: query-log entries the engine has already seen (restored checkpoint).
    positions: input offsets the restored state covers.
    """

    def __init__(
        self,
        submit: Callable[[Command], None],
        next_seq: int,
        max_queued: int,
        max_chunk: int = 1 << 62,
        log_entries: int = 0,
        positions: Positions | None = None,
    ) -> None:
        self._submit = submit
        self._next_seq = next_seq
        self._handed = next_seq  # every update before this seq is with the engine
        self._max_queued = max_queued
        self._max_chunk = max_chunk
        self._queued = 0
        self._room = asyncio.Event()
        self._room.set()
        self._slots: list[Slot] = []
        self._held: deque[Apply] = deque()
        self._log_entries = log_entries
        self._positions: Positions = {k: dict(v) for k, v in (positions or {}).items()}

    @property
    def next_seq(self) -> int:
        return self._next_seq

    @property
    def queued(self) -> int:
        """Updates admitted whose output is not yet out."""
        return self._queued

    @property
    def held(self) -> int:
        """Updates waiting for a reserved slot to be filled."""
        return sum(len(a.batch) for a in self._held)

    @property
    def positions(self) -> Positions:
        """Input offsets right after the last record whose updates have seqs."""
        return {k: dict(v) for k, v in self._positions.items()}

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

    # -- updates -------------------------------------------------------------------------

    def submit_updates(
        self,
        batch: UpdateBatch,
        received: float,
        origin: Origin | None,
        positions: Iterable[tuple[str, int, int]] = (),
    ) -> int:
        """Give ``batch`` seqs (its ``ts`` are the arrival times; seqs are placeholders) and
        queue it; returns the first seq. ``positions`` (source, partition, next offset) say
        which input records the batch ends. An empty batch still travels, carrying ``origin``
        (a record that was all dead letters) through the pipeline in order."""
        n = len(batch)
        first = self._next_seq
        stamped = dataclasses.replace(batch, seq=np.arange(first, first + n, dtype=np.int64))
        self._next_seq += n
        self._queued += n
        for source, partition, offset in positions:
            self._positions.setdefault(source, {})[partition] = offset
        self._held.append(Apply(stamped, received, origin))
        self._pump()
        return first

    # -- control slots -------------------------------------------------------------------

    def reserve(self) -> Slot:
        """A slot for a registration or unregistration, at the next seq or after the last
        slot, whichever is later. Fill it with :meth:`fill`."""
        seq = max(self._next_seq, self._slots[-1].seq if self._slots else 0)
        slot = Slot(seq)
        self._slots.append(slot)
        return slot

    def fill(self, slot: Slot, cmd: Register | Unregister) -> None:
        slot.cmd = cmd
        self._pump()

    def cancel(self, slot: Slot) -> None:
        """Give up a reserved slot (the registration could not be logged)."""
        self._slots.remove(slot)
        self._pump()

    def advance(self, source: str, partition: int, offset: int) -> None:
        """An input record that carries no updates (a control record) is read: positions
        taken from now on cover it."""
        self._positions.setdefault(source, {})[partition] = offset

    def schedule(self, cmd: Register | Unregister) -> None:
        """Re-queue a logged command at its own seq (query-log replay after a restart)."""
        self._insert(Slot(cmd.from_seq, cmd))

    def submit_export(self, reply: asyncio.Future | None) -> Export:
        """A checkpoint of the state before the next seq."""
        cmd = Export(self._next_seq, self.positions, 0, reply)
        self._insert(Slot(cmd.at_seq, cmd))
        return cmd

    def submit_barrier(self, reply: asyncio.Future | None) -> None:
        self._insert(Slot(self._next_seq, Barrier(reply)))

    def _insert(self, slot: Slot) -> None:
        keys = [s.seq for s in self._slots]
        self._slots.insert(bisect.bisect_right(keys, slot.seq), slot)
        self._pump()

    # -- hand-off ------------------------------------------------------------------------

    def _pump(self) -> None:
        """Hand the engine everything no unfilled slot holds back, in seq order."""
        while True:
            if self._slots and self._slots[0].seq <= self._handed:
                slot = self._slots[0]
                if slot.cmd is None:
                    return  # reserved: updates from here on wait for it
                self._slots.pop(0)
                cmd = slot.cmd
                if isinstance(cmd, Register | Unregister) and cmd.logged:
                    self._log_entries += 1
                elif isinstance(cmd, Export):
                    cmd.log_entries = self._log_entries
                self._submit(cmd)
                continue
            if not self._held:
                return
            head = self._held[0]
            n = len(head.batch)
            cut = min(n, self._max_chunk)
            if self._slots:
                cut = min(cut, self._slots[0].seq - self._handed)
            if cut == n:
                self._held.popleft()
                self._handed += n
                self._submit(head)
                continue
            # A slot falls inside this batch, or it is too big: hand a piece, keep the rest.
            origin = head.origin
            if origin is not None and not isinstance(origin, _Pieces):
                origin = _Pieces(origin, 1)
            if isinstance(origin, _Pieces):
                origin._left += 1
            before = Apply(head.batch.slice(0, cut), head.received, origin)
            self._held[0] = Apply(head.batch.slice(cut, n), head.received, origin)
            self._handed += cut
            self._submit(before)
