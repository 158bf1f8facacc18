"""The load generator's frame readers: latencies from the service's own frames, in both
encodings, without per-update Python for batch frames; metric samples from /metrics text."""

from __future__ import annotations

import numpy as np

from dcsm.loadgen.collect import FrameLatencies, metric_samples
from dcsm.service.frames import count_batch_frame, count_frames, delta_batch_frame, gap_frame


def test_batch_and_json_frames_give_per_update_latencies() -> None:
    rng = np.random.default_rng(4)
    seq = np.arange(100, 160, dtype=np.int64)
    sign = np.where(rng.random(60) < 0.8, 1, -1).astype(np.int8)
    count = np.full(60, 2, np.int64)
    arrival = 1000.0 + np.sort(rng.random(60))
    col = FrameLatencies("_probe")
    # Seqs 100..139 in two batch frames, 140..159 as per-row JSON frames.
    col.add(count_batch_frame("_probe", sign[:25], seq[:25], count[:25], arrival[:25], 1001.5),
            1002.0)  # fmt: skip
    col.add(
        count_batch_frame("_probe", sign[25:40], seq[25:40], count[25:40], arrival[25:40], 1002.5)
        .encode(),
        1003.0,
    )  # fmt: skip
    texts, _ = count_frames("_probe", sign[40:], seq[40:], count[40:], arrival[40:], 1003.5)
    col.add_many([t.encode() for t in texts], 1004.0)
    # Ignored: other queries, backfill, a repeated frame (first receipt wins); gaps counted.
    col.add(count_batch_frame("other", sign, seq, count, arrival, 1001.0), 1001.0)
    col.add(count_batch_frame("_probe", sign[:5], seq[:5], count[:5], arrival[:5], 1001.0,
                              backfill=True), 1001.0)  # fmt: skip
    col.add(count_batch_frame("_probe", sign[:25], seq[:25], count[:25], arrival[:25], 1009.0),
            1010.0)  # fmt: skip
    col.add(gap_frame(7), 1010.0)

    got = col.latencies(100, 60)
    recv = np.r_[np.full(25, 1002.0), np.full(15, 1003.0), np.full(20, 1004.0)]
    emitted = np.r_[np.full(25, 1001.5), np.full(15, 1002.5), np.full(20, 1003.5)]
    np.testing.assert_array_equal(got.seq, seq)
    # The frames carry arrival_ts to the microsecond.
    np.testing.assert_allclose(got.e2e, recv - arrival, atol=2e-6)
    np.testing.assert_allclose(got.service, emitted - arrival, atol=2e-6)
    assert col.gaps == 7

    part = col.latencies(130, 20)  # a step's seq range
    np.testing.assert_array_equal(part.seq, np.arange(130, 150))
    np.testing.assert_allclose(part.e2e, (recv - arrival)[30:50], atol=2e-6)
    assert len(FrameLatencies("none").latencies(0, 10).e2e) == 0


def test_delta_batch_frames_count_once_per_seq() -> None:
    seq = np.array([5, 5, 5, 6], np.int64)
    match = np.arange(8, dtype=np.int64).reshape(4, 2)
    arrival = np.array([1.0, 1.0, 1.0, 2.0])
    col = FrameLatencies("tri")
    col.add(delta_batch_frame("tri", np.ones(4, np.int8), seq, match, arrival, 2.5), 3.0)
    got = col.latencies(0, 10)
    np.testing.assert_array_equal(got.seq, [5, 6])
    np.testing.assert_allclose(got.e2e, [2.0, 1.0])


def test_metric_samples() -> None:
    text = (
        "# HELP dcsm_consumer_lag Records behind.\n# TYPE dcsm_consumer_lag gauge\n"
        'dcsm_consumer_lag{partition="0"} 12.0\ndcsm_consumer_lag{partition="1"} 3.0\n'
        "dcsm_consumer_lag_other 99.0\nprocess_resident_memory_bytes 1.2e+08\n"
    )
    assert metric_samples(text, "dcsm_consumer_lag") == [12.0, 3.0]
    assert metric_samples(text, "process_resident_memory_bytes") == [1.2e8]
    assert metric_samples(text, "absent") == []


def test_client_batches_give_the_same_latencies_as_raw_frames() -> None:
    """What ``dcsm loadgen`` reads from its websocket (``Subscription.batches()`` items)
    gives what the raw frames give."""
    from dcsm.client import parse_frame

    seq = np.arange(10, 30, dtype=np.int64)
    sign = np.ones(20, np.int8)
    count = np.ones(20, np.int64)
    arrival = 100.0 + np.arange(20) / 100
    raw, via_client = FrameLatencies("_probe"), FrameLatencies("_probe")
    frames = [
        count_batch_frame("_probe", sign[:12], seq[:12], count[:12], arrival[:12], 100.5),
        count_batch_frame("_probe", sign[12:], seq[12:], count[12:], arrival[12:], 100.7),
        count_batch_frame("other", sign, seq, count, arrival, 100.7),
        gap_frame(3),
    ]
    for i, f in enumerate(frames):
        raw.add(f, 101.0 + i)
        via_client.add_batch(parse_frame(f, 101.0 + i))
    a, b = raw.latencies(10, 20), via_client.latencies(10, 20)
    np.testing.assert_array_equal(a.seq, b.seq)
    np.testing.assert_allclose(a.e2e, b.e2e)
    np.testing.assert_allclose(a.service, b.service)
    assert raw.gaps == via_client.gaps == 3
