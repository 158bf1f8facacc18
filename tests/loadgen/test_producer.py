"""The paced producer's layout (records by time window, each update stamped with its scheduled
time, decodable by the service) and the pool's round-robin deal."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.loadgen.pool import deal
from dcsm.loadgen.producer import arrival_offsets, layout, window_bounds
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.codec import decode_record


def test_arrival_offsets_keep_the_nominal_rate() -> None:
    off = arrival_offsets(500, 250.0, seed=3)
    assert off[-1] == pytest.approx(2.0)  # n / rate, whatever the draw
    assert (np.diff(off) >= 0).all() and off[0] > 0


def test_window_bounds_group_and_split() -> None:
    off = np.array([0.0001, 0.0005, 0.0012, 0.0013, 0.0014, 0.0031])
    np.testing.assert_array_equal(window_bounds(off, 0.001, 10), [0, 2, 5, 6])
    np.testing.assert_array_equal(window_bounds(off, 0.001, 2), [0, 2, 4, 5, 6])
    np.testing.assert_array_equal(window_bounds(np.zeros(0), 0.001, 2), [0])
    # No linger: one update a record (a window of 0 once divided by it, so that every
    # update fell in one slot and went out in records of max_updates, seconds late).
    np.testing.assert_array_equal(window_bounds(off, 0.0, 2), np.arange(7))


@pytest.mark.parametrize("encoding", ["binary", "json"])
def test_records_decode_to_the_stream_with_scheduled_ts(encoding: str) -> None:
    batch = powerlaw_stream(300, 2000, seed=2)
    off = arrival_offsets(len(batch), 20_000.0, seed=1)
    plan = layout(batch, off, encoding, window_s=0.001)
    recs = plan.stamp(5000.0)
    assert recs.sizes.sum() == len(batch) and len(recs) == len(plan) > 10
    # A record goes out when its last update is due.
    np.testing.assert_allclose(recs.send_at, off[np.cumsum(recs.sizes) - 1])
    parts = [decode_record(v, 100_000) for v in recs.values]
    assert not any(p.errors for p in parts)
    got = [p.updates for p in parts]
    for field in ("op", "u", "v", "label", "u_label", "v_label"):
        np.testing.assert_array_equal(np.concatenate([getattr(g, field) for g in got]),
                                      getattr(batch, field))  # fmt: skip
    ts = np.concatenate([g.ts for g in got])
    np.testing.assert_allclose(ts, 5000.0 + off, atol=1e-6)
    assert len(layout(batch, off, encoding).stamp(None).values) == len(recs)


def test_deal_gives_every_record_to_one_process_in_order() -> None:
    bounds = np.array([0, 3, 4, 9, 10, 12, 20])
    shares = [deal(bounds, 3, w) for w in range(3)]
    np.testing.assert_array_equal(shares[0][0], [0, 1, 2, 9])  # records 0 and 3
    np.testing.assert_array_equal(shares[0][1], [0, 3, 4])
    np.testing.assert_array_equal(shares[2][0], [4, 5, 6, 7, 8, 12, 13, 14, 15, 16, 17, 18, 19])
    everything = np.sort(np.concatenate([s[0] for s in shares]))
    np.testing.assert_array_equal(everything, np.arange(20))


@pytest.mark.parametrize("vertices,updates", [(3, 300), (40, 4000)])
def test_a_stream_over_few_vertices_ends_and_stays_valid(vertices: int, updates: int) -> None:
    """More updates than a small graph has vertex pairs: the stream still ends (it once
    looked for a free pair forever: ``dcsm demo --vertices 3`` hung), every insertion
    adds an edge that is not there and every deletion removes one that is."""
    batch = powerlaw_stream(vertices, updates, seed=5)
    live: set[tuple[int, int]] = set()
    for op, u, v in zip(batch.op.tolist(), batch.u.tolist(), batch.v.tolist(), strict=True):
        edge = (min(u, v), max(u, v))
        assert u != v and (edge in live) == (op < 0)
        (live.discard if op < 0 else live.add)(edge)
    assert len(live) <= vertices * (vertices - 1) // 2
