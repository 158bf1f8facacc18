"""Crash safety end to end: a real tansu broker, real ``dcsm serve`` processes (CPU engine)
killed with SIGKILL at 20 seeded random moments (and, apart, stopped with SIGTERM 5 times)
while a producer keeps writing a 20,000-update stream; the queries, the graph and every delta
after dedupe by id equal an uninterrupted run's. The scenario and its checks live in
``bench/chaos.py`` (whose ``--kills 100`` run is committed under ``bench/results/chaos``).

The summary (kills, moments hit, updates, deltas, duplicates, differences) is printed: run
with ``-s`` or ``-rP`` to see it.
"""

from __future__ import annotations

import pytest
from helpers import bench_script

pytestmark = pytest.mark.kafka


async def test_sigkill_at_20_random_moments_loses_nothing(broker, tmp_path) -> None:
    chaos = bench_script("chaos")
    cfg = chaos.Config(updates=20_000, kills=20, seed=1, signal="kill")
    res = await chaos.run(broker.bootstrap, chaos.Topics.fresh(), tmp_path, cfg)
    print(res.summary())
    assert res.total_differences == 0, res.summary()
    assert res.restarts == 20
    # Every kind of moment was aimed at (what each kill hit is in the summary).
    assert set(res.kinds) == {"startup", "busy", "checkpoint", "steady", "control"}
    assert res.deltas > 10_000 and res.count_rows > 1000, res.summary()


async def test_sigterm_restarts_give_no_duplicates(broker, tmp_path) -> None:
    """A SIGTERM'd service drains and writes its final checkpoint, so the next start emits
    nothing again: no row is replayed. A copy that carries its first copy's emission time
    was sent twice below the service (a producer's retry; tansu takes no idempotent
    producers), which at-least-once delivery allows: the summary counts those."""
    chaos = bench_script("chaos")
    cfg = chaos.Config(updates=20_000, kills=5, seed=2, signal="term")
    res = await chaos.run(broker.bootstrap, chaos.Topics.fresh(), tmp_path, cfg)
    print(res.summary())
    assert res.total_differences == 0, res.summary()
    assert res.replayed == 0, res.summary()
    assert res.restarts == 5
    # Each start's seconds, and its engine's and input lease's, which it contains (side by
    # side since the engine builds while the lease is taken: their sum may pass it).
    assert len(res.each_start) == 6
    for s in res.each_start:
        assert s["engine"] is not None and s["lease"] is not None, res.each_start
        assert s["start"] >= max(s["engine"], s["lease"]), res.each_start
