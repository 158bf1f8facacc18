"""The GPU engine's query slots on the host (gpu/query_slots.py): slots taken and
recycled, control records placed before the first update they affect, in order."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.errors import EngineError
from dcsm.gpu import layout as L
from dcsm.gpu.query_slots import QuerySlots


def updates(seqs: list[int]) -> np.ndarray:
    """Insertion records, one per seq (their fields do not matter here)."""
    recs = np.zeros(len(seqs), L.IN_REC)
    recs["kind"] = L.REC_INSERT
    return recs


def test_slots_taken_until_full_and_recycled_after_the_cut() -> None:
    s = QuerySlots(2)
    assert s.take(7, count_only=True, nverts=3) == 0
    assert s.take(9, count_only=False, nverts=5) == 1
    assert s.qid.tolist() == [7, 9] and s.count_only.tolist() == [True, False]
    assert s.live().tolist() == [0, 1] and s.width() == 5
    with pytest.raises(EngineError, match="all 2 GPU query slots are in use"):
        s.check_room()
    # Query 9 leaves from seq 20: its slot stays taken until the update before the cut
    # (tau 12 here: the record goes before the update of tau 13) has completed.
    s.queue_control(20, L.REC_UNREGISTER, s.release(9), 0, 0)
    seqs = np.array([18, 19, 20, 21])
    recs = s.with_controls(updates(seqs.tolist()), seqs, tau0=11)
    assert recs["kind"].tolist() == [L.REC_INSERT] * 2 + [L.REC_UNREGISTER] + [L.REC_INSERT] * 2
    s.free_finished(11)
    assert s.qid[1] == 9
    s.free_finished(12)
    assert s.qid[1] == -1 and s.width() == 3
    s.check_room()
    assert s.take(10, count_only=False, nverts=4) == 1


def test_controls_wait_for_their_update_and_keep_their_order() -> None:
    s = QuerySlots(4)
    a, b = s.take(1, False, 3), s.take(2, False, 3)
    s.queue_control(50, L.REC_REGISTER, b, 0, 6)
    s.queue_control(10, L.REC_REGISTER, a, 1, 6)
    s.queue_control(50, L.REC_UNREGISTER, s.release(1), 0, 0)  # after query 2's register
    # A piece of updates up to seq 9 carries none of them (the engine then writes it
    # straight into the ring); one that reaches seq 10 carries the first.
    assert not s.due_by(9) and s.due_by(10)
    seqs = np.array([5, 10, 11])
    recs = s.with_controls(updates([5, 10, 11]), seqs, tau0=1)
    assert recs["kind"].tolist() == [L.REC_INSERT, L.REC_REGISTER, L.REC_INSERT, L.REC_INSERT]
    assert int(recs["a"][1]) == a  # the slot rides in the record's first field
    # Nothing for seq 50 yet: a piece without it leaves both controls waiting.
    assert len(s.with_controls(updates([20]), np.array([20]), tau0=4)) == 1
    assert not s.due_by(49) and s.due_by(50)
    recs = s.with_controls(updates([60, 61]), np.array([60, 61]), tau0=5)
    assert recs["kind"].tolist() == [L.REC_REGISTER, L.REC_UNREGISTER, L.REC_INSERT, L.REC_INSERT]
    assert recs["a"][:2].tolist() == [b, a]


def test_controls_before_a_piece_come_out_alone() -> None:
    """The engine writes the controls due by a piece's first update ahead of the piece
    (with_controls of no records, the first seq alone): they come out in order, an
    unregistered slot is freed from the piece's first tau on, later ones wait."""
    s = QuerySlots(4)
    a, b = s.take(1, False, 3), s.take(2, False, 3)
    s.queue_control(10, L.REC_REGISTER, a, 1, 6)
    s.queue_control(12, L.REC_UNREGISTER, s.release(2), 0, 0)
    s.queue_control(50, L.REC_REGISTER, s.take(3, False, 3), 0, 6)
    lead = s.with_controls(np.zeros(0, L.IN_REC), np.array([12]), tau0=7)
    assert lead["kind"].tolist() == [L.REC_REGISTER, L.REC_UNREGISTER]
    assert s.due_by(50) and not s.due_by(49)
    s.free_finished(5)
    assert s.qid[b] == 2
    s.free_finished(6)  # tau 6 was the last before the piece
    assert s.qid[b] == -1
