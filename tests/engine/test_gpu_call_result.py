"""One GPU apply call's result, assembled on the host (gpu/call_result.py): the device's
outcomes land on the updates that were sent, count rows come out in (update, query) order,
and consecutive calls' results concatenate."""

from __future__ import annotations

import numpy as np

from dcsm.engine.interface import BatchResult
from dcsm.gpu.call_result import CallResult, clock_slack, concat_results
from dcsm.model import OUTCOME_APPLIED, UpdateBatch

NO_EXT = np.zeros(0, np.int64)  # no match rows: no vertex is looked up


def test_outcomes_times_and_counts_by_update() -> None:
    batch = UpdateBatch.from_arrays(np.ones(4), np.arange(4), np.arange(4) + 10, first_seq=100)
    res = CallResult(batch, tau0=7, width=3, slot_qid=np.array([5, 3], np.int32))
    res.add_sent(np.array([0, 2, 3]))  # update 1 was refused on the host
    res.dev_outcome[:3] = OUTCOME_APPLIED
    res.started[:3] = [1.0, 2.0, 3.0]
    res.finished[:3] = [1.5, 2.5, 3.5]
    # Count rows by sent index (0..2); the same update's rows by slot: query 5 then 3.
    res.add_count_rows(np.array([0, 0, 2]), np.array([5, 3, 3], np.int32),
                       np.array([4, 1, 2], np.int64))  # fmt: skip
    host = np.array([0, 9, 0, 0], np.int8)  # the host's own outcome for update 1
    out = res.result(host, NO_EXT)
    assert out.outcome.tolist() == [OUTCOME_APPLIED, 9, OUTCOME_APPLIED, OUTCOME_APPLIED]
    assert out.started[[0, 2, 3]].tolist() == [1.0, 2.0, 3.0]
    assert out.finished[[0, 2, 3]].tolist() == [1.5, 2.5, 3.5]
    assert list(zip(out.counts.seq.tolist(), out.counts.query.tolist(), strict=True)) == [
        (100, 3), (100, 5), (103, 3)
    ]  # fmt: skip
    assert out.counts.count.tolist() == [1, 4, 2] and (out.counts.sign == 1).all()
    assert len(out.deltas.query) == 0 and host[1] == 9  # the caller's array is not changed
    both = concat_results([out, res.result(host, NO_EXT)])
    assert isinstance(both, BatchResult) and len(both.outcome) == 8 and len(both.counts) == 6


def test_every_update_sent_takes_the_device_arrays_as_they_are() -> None:
    batch = UpdateBatch.from_arrays(-np.ones(3), np.arange(3), np.arange(3) + 5, first_seq=7)
    res = CallResult(batch, tau0=1, width=2, slot_qid=np.array([4], np.int32))
    res.add_sent(np.arange(3))
    res.dev_outcome[:] = OUTCOME_APPLIED
    res.started[:] = [1.0, 2.0, 3.0]
    res.add_count_rows(np.array([2]), np.array([4], np.int32), np.array([6], np.int64))
    out = res.result(np.zeros(3, np.int8), NO_EXT)
    assert out.outcome.tolist() == [OUTCOME_APPLIED] * 3 and out.started.tolist() == [1, 2, 3]
    assert (out.counts.seq.tolist(), out.counts.sign.tolist()) == ([9], [-1])


def test_count_rows_in_order_or_not_come_out_as_a_stable_sort() -> None:
    """Count rows in several parts (one per pump), in (update, query) order or shuffled,
    with every update sent or some refused: the counts are the rows sorted by (update,
    query) with each update's seq and sign."""
    rng = np.random.default_rng(5)
    n = 500
    op = np.where(rng.random(n) < 0.7, 1, -1)
    batch = UpdateBatch.from_arrays(op, np.arange(n), np.arange(n) + n, first_seq=1000)
    for every, shuffled in ((True, False), (False, False), (False, True)):
        sent = np.arange(n) if every else np.sort(rng.choice(n, 300, replace=False))
        res = CallResult(batch, tau0=1, width=2, slot_qid=np.array([3, 8, 5], np.int32))
        res.add_sent(sent)
        res.dev_outcome[: len(sent)] = OUTCOME_APPLIED
        # rows: (sent index, query) pairs, each query at most once an update
        keys = np.unique(rng.integers(0, len(sent), 800) * 3 + rng.integers(0, 3, 800))
        i, q = keys // 3, np.array([3, 5, 8])[keys % 3].astype(np.int32)
        c = rng.integers(1, 10**6, len(keys))
        order = rng.permutation(len(keys)) if shuffled else np.arange(len(keys))
        for part in np.array_split(order, 4):
            res.add_count_rows(i[part], q[part], c[part])
        out = res.result(np.zeros(n, np.int8), NO_EXT).counts
        upd = sent[i]
        assert out.query.tolist() == q.tolist() and out.count.tolist() == c.tolist()
        assert out.seq.tolist() == batch.seq[upd].tolist()
        assert out.sign.tolist() == batch.op[upd].tolist()
        assert (out.query.dtype, out.seq.dtype, out.sign.dtype) == (np.int32, np.int64, np.int8)


def test_seen_stamps_only_this_calls_updates() -> None:
    """The pump stamps when it read completion records by tau range; a range that reaches
    past this call's taus (an earlier call's, or ones not sent yet) stamps only its own."""
    batch = UpdateBatch.from_arrays(np.ones(4), np.arange(4), np.arange(4) + 10)
    res = CallResult(batch, tau0=10, width=1, slot_qid=np.array([0], np.int32))
    res.add_sent(np.arange(3))  # taus 10, 11, 12
    res.seen[:] = -1.0
    res.add_seen(8, 3, 5.0)  # taus 8..10: 10 is ours
    res.add_seen(11, 4, 6.0)  # taus 11..14: 11, 12 are ours
    res.add_seen(20, 2, 7.0)  # none of ours
    assert res.seen.tolist() == [5.0, 6.0, 6.0, -1.0]
    assert res.timeline()["seen"].tolist() == [5.0, 6.0, 6.0]


def test_entered_is_zero_unless_the_call_was_paced() -> None:
    """An unpaced call's timeline says 0 for when each update entered the ring (the array
    is made only by a paced call's first add_entered); a paced call's, the stamps."""
    batch = UpdateBatch.from_arrays(np.ones(4), np.arange(4), np.arange(4) + 10)
    unpaced = CallResult(batch, tau0=0, width=1, slot_qid=np.array([0], np.int32))
    unpaced.add_sent(np.arange(3))
    assert unpaced.timeline()["entered"].tolist() == [0.0, 0.0, 0.0]
    paced = CallResult(batch, tau0=0, width=1, slot_qid=np.array([0], np.int32))
    paced.add_sent(np.arange(3))
    paced.add_entered(np.array([1_000_000_000, 2_000_000_000]))
    paced.add_entered(np.array([3_500_000_000]))
    assert paced.timeline()["entered"].tolist() == [1.0, 2.0, 3.5]


def test_clock_slack_bounds_the_mapping_from_the_records() -> None:
    """From a paced call's records. Device times mapped 11 us late: the host saw a
    completion 11 us before its mapped finish, and the least ring wait is 15 us, so the
    correction is between -15 and -11 us. Mapped early, the records allow moving them later
    by up to the least seen time, and a ring wait that looks negative raises the lower
    bound above 0."""
    us = 1e-6
    entered = np.array([0.0, 100.0, 200.0]) * us
    taken = entered + np.array([15.0, 30.0, 40.0]) * us
    finished = taken + 50 * us
    seen = finished + np.array([-11.0, 5.0, 20.0]) * us
    ring_min = float((taken - entered).min())  # as bench/gpu_bench.py takes them
    lo, hi = clock_slack(ring_min, float((seen - finished).min()))
    assert np.isclose(hi, -11 * us) and np.isclose(lo, -15 * us)
    lo, hi = clock_slack(ring_min, 3 * us)
    assert np.isclose(hi, 3 * us) and np.isclose(lo, -15 * us)
    lo, hi = clock_slack(-2 * us, 3 * us)  # taken 2 us before it entered
    assert np.isclose(hi, 3 * us) and np.isclose(lo, 2 * us)
