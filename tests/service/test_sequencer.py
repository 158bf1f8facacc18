"""The sequencer: one seq for every input, control slots at exact seqs, held updates,
origins cut by a slot settled once, admission room."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from dcsm.model import Pattern, UpdateBatch
from dcsm.service.messages import Apply, Barrier, Command, Export, Register, Unregister
from dcsm.service.sequencer import Sequencer

EDGE = Pattern.build("e", [None, None], [(0, 1, None)])


def updates(n: int) -> UpdateBatch:
    return UpdateBatch.from_arrays(np.ones(n), np.arange(n), np.arange(n) + 1000)


class Recorder:
    """Stands in for the engine thread's queue: records what it is handed, in order."""

    def __init__(self) -> None:
        self.cmds: list[Command] = []

    def __call__(self, cmd: Command) -> None:
        self.cmds.append(cmd)

    def shape(self) -> list[tuple[str, int, int]]:
        """(kind, first seq, last seq) of updates; (kind, seq, seq) of controls."""
        out = []
        for c in self.cmds:
            if isinstance(c, Apply):
                b = c.batch
                out.append(
                    ("apply", int(b.seq[0]), int(b.seq[-1])) if len(b) else ("apply", -1, -1)
                )
            elif isinstance(c, Register | Unregister):
                out.append((type(c).__name__.lower(), c.from_seq, c.from_seq))
            elif isinstance(c, Export):
                out.append(("export", c.at_seq, c.log_entries))
            else:
                out.append(("barrier", 0, 0))
        return out


class Origin:
    def __init__(self) -> None:
        self.settled: list[tuple[np.ndarray, np.ndarray]] = []

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        self.settled.append((seq, outcome))

    async def fail(self, error: BaseException) -> None:
        raise AssertionError(error)


def register(seq: Sequencer, qid: int) -> None:
    slot = seq.reserve()
    seq.fill(slot, Register(qid, EDGE, slot.seq, False, False))


def test_seqs_are_consecutive_across_sources() -> None:
    rec = Recorder()
    s = Sequencer(rec, 10, 1000)
    assert s.submit_updates(updates(3), 0.0, None, [("kafka:t", 0, 5)]) == 10
    assert s.submit_updates(updates(2), 0.0, None, [("log:updates", 0, 1)]) == 13
    assert rec.shape() == [("apply", 10, 12), ("apply", 13, 14)]
    assert s.positions == {"kafka:t": {0: 5}, "log:updates": {0: 1}}
    assert s.queued == 5


def test_a_reserved_slot_holds_later_updates_until_filled() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 1000)
    s.submit_updates(updates(2), 0.0, None)
    slot = s.reserve()
    assert slot.seq == 2
    s.submit_updates(updates(3), 0.0, None)  # seqs 2..4 wait for the slot
    assert rec.shape() == [("apply", 0, 1)]
    assert s.held == 3
    s.fill(slot, Register(0, EDGE, slot.seq, False, False))
    assert rec.shape() == [("apply", 0, 1), ("register", 2, 2), ("apply", 2, 4)]
    assert s.held == 0


def test_a_cancelled_slot_releases_the_held_updates() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 1000)
    slot = s.reserve()
    s.submit_updates(updates(2), 0.0, None)
    s.cancel(slot)
    assert rec.shape() == [("apply", 0, 1)]


async def test_a_scheduled_control_cuts_a_batch_and_its_origin_settles_once() -> None:
    rec = Recorder()
    s = Sequencer(rec, 100, 1000)
    s.schedule(Register(0, EDGE, 103, False, False))  # replayed from the query log
    s.schedule(Unregister(0, 106))
    origin = Origin()
    s.submit_updates(updates(8), 0.0, origin)
    assert rec.shape() == [
        ("apply", 100, 102), ("register", 103, 103), ("apply", 103, 105),
        ("unregister", 106, 106), ("apply", 106, 107),
    ]  # fmt: skip
    for cmd in rec.cmds:  # the fan-out settles each piece in order
        if isinstance(cmd, Apply):
            assert cmd.origin is not None
            await cmd.origin.settle(cmd.batch.seq, np.zeros(len(cmd.batch), np.int8))
    assert len(origin.settled) == 1
    assert origin.settled[0][0].tolist() == list(range(100, 108))


def test_registrations_never_go_back_before_an_earlier_slot() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 1000)
    s.schedule(Register(0, EDGE, 50, False, False))  # pending from before a restart
    slot = s.reserve()  # a new registration during replay
    assert slot.seq == 50  # not 0: the query log's order stays the engine's order
    s.fill(slot, Register(1, EDGE, slot.seq, False, False))
    s.submit_updates(updates(60), 0.0, None)
    assert rec.shape() == [
        ("apply", 0, 49), ("register", 50, 50), ("register", 50, 50), ("apply", 50, 59),
    ]  # fmt: skip
    assert [c.qid for c in rec.cmds if isinstance(c, Register)] == [0, 1]


def test_an_export_records_positions_and_log_entries_at_its_seq() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 1000, log_entries=4)
    s.submit_updates(updates(3), 0.0, None, [("kafka:t", 0, 7)])
    register(s, 9)
    s.submit_export(None)
    s.submit_updates(updates(2), 0.0, None, [("kafka:t", 0, 8)])
    export = next(c for c in rec.cmds if isinstance(c, Export))
    assert (export.at_seq, export.log_entries, export.positions) == (3, 5, {"kafka:t": {0: 7}})


def test_an_export_before_a_pending_slot_does_not_count_it() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 1000)
    s.schedule(Register(0, EDGE, 10, False, False))
    s.submit_updates(updates(4), 0.0, None)
    s.submit_export(None)
    s.submit_barrier(None)
    assert rec.shape() == [("apply", 0, 3), ("export", 4, 0), ("barrier", 0, 0)]


async def test_room_opens_when_output_is_released() -> None:
    s = Sequencer(Recorder(), 0, 5)
    s.submit_updates(updates(5), 0.0, None)
    waiter = asyncio.ensure_future(s.wait_for_room())
    await asyncio.sleep(0.01)
    assert not waiter.done()
    s.release(1)
    await asyncio.wait_for(waiter, 1)


@pytest.mark.parametrize("n", [0, 1])
def test_an_empty_batch_still_travels(n: int) -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 10)
    s.submit_updates(updates(n), 0.0, Origin())
    assert len(rec.cmds) == 1 and isinstance(rec.cmds[0], Apply)
    assert isinstance(rec.cmds[-1], Apply | Barrier)


async def test_a_big_batch_is_handed_in_pieces_and_settled_once() -> None:
    rec = Recorder()
    s = Sequencer(rec, 0, 10_000, max_chunk=4)
    origin = Origin()
    s.submit_updates(updates(10), 0.0, origin)
    assert rec.shape() == [("apply", 0, 3), ("apply", 4, 7), ("apply", 8, 9)]
    for cmd in rec.cmds:
        assert isinstance(cmd, Apply) and cmd.origin is not None
        await cmd.origin.settle(cmd.batch.seq, np.zeros(len(cmd.batch), np.int8))
    assert [x[0].tolist() for x in origin.settled] == [list(range(10))]
