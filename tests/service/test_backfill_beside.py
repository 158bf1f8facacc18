"""A backfill runs beside the stream (service/backfill.py): while it computes, every other
query's updates are matched and delivered; the backfilled query then gets its backfill
first and the live deltas held meanwhile, in seq order, exactly what the CPU engine gives;
no checkpoint covers the held deltas before they are out; a deletion waits for the backfill.

The backfill is held back by a gate around the real slice runner, so "while it runs" is a
fact of the test, not a race with the machine's speed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import TRI, oracle_deltas

from dcsm.engine import make_engine
from dcsm.engine.cpu import CpuEngine
from dcsm.errors import EngineError
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Pattern, UpdateBatch
from dcsm.schemas import QuerySpec
from dcsm.service import checkpoint
from dcsm.service.app import Service
from dcsm.service.backfill import Backfiller, BackfillJob, carried
from dcsm.service.fanout import Fanout
from dcsm.service.messages import BackfillDone, BackfillPart, Register
from dcsm.service.queries import QueryState
from dcsm.service.settings import Settings

WEDGE = Pattern.build("wedge", [None] * 3, [(0, 1, None), (1, 2, None)])


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Backfill slices wait until the gate opens, then run for real."""
    opened = threading.Event()
    run = BackfillJob.run_slice

    def gated(self: BackfillJob, i: int) -> bool:
        assert opened.wait(60), "the test never opened the gate"
        return run(self, i)

    monkeypatch.setattr(BackfillJob, "run_slice", gated)
    return opened


async def frames(st: QueryState) -> list[dict[str, Any]]:
    """The frames the query's unclaimed subscriber collected so far."""
    sub = st.pending
    assert sub is not None
    out = []
    while not sub.idle:
        text = await sub.next()
        assert text is not None
        out.append(json.loads(text))
    return out


def with_seqs(batch: UpdateBatch, first: int) -> UpdateBatch:
    return dataclasses.replace(batch, seq=np.arange(first, first + len(batch), dtype=np.int64))


async def until(check: Any, timeout_s: float = 30.0) -> None:
    for _ in range(int(timeout_s / 0.01)):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


async def test_updates_flow_while_a_backfill_runs_and_its_frames_come_in_order(
    tmp_path: Path, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts: list[int] = []  # rows of each BackfillPart the fan-out handled
    handle_part = Fanout._backfill_part

    async def counted(self: Fanout, ev: BackfillPart) -> None:
        parts.append(len(ev.matches))
        await handle_part(self, ev)

    monkeypatch.setattr(Fanout, "_backfill_part", counted)
    stream = powerlaw_stream(80, 900, num_labels=1, seed=5)
    head, tail = stream.slice(0, 450), stream.slice(450, 900)
    state = tmp_path / "state"
    svc = Service(
        Settings(
            backend="cpu",
            state_dir=str(state),
            checkpoint_interval_s=0.05,
            pending_frames=1_000_000,
            max_deltas_per_update=0,
        )  # fmt: skip
    )
    await svc.start()
    other, _ = await svc.register_query(QuerySpec.from_pattern(TRI), "embeddings", "json", False)
    await svc.submit_updates(head, wait=True)  # seqs 0..449 (a registration takes none)
    spec = QuerySpec.from_pattern(WEDGE)
    registering = asyncio.create_task(svc.register_query(spec, "embeddings", "json", True))
    await until(lambda: (q := svc.catalog.find("wedge")) is not None and q.live)
    st = svc.catalog.get("wedge")
    assert st.from_seq == 450 and st.describe()["state"] == "backfilling"
    assert st.describe()["backfill_progress"] == 0.0

    # The stream goes on: the tail is matched and out for the other query meanwhile.
    await svc.submit_updates(tail, wait=True)  # seqs 450..899
    assert st.backfill_job is not None and not registering.done()
    want_tri = oracle_deltas(with_seqs(stream, 0), [(TRI, 0)])
    got_tri = await frames(other)
    assert len(got_tri) == len(want_tri) and got_tri[-1]["seq"] > 450
    assert await frames(st) == [], "the wedge's live deltas wait for its backfill"
    await asyncio.sleep(0.3)  # periodic checkpoints are due: none may cover the held deltas
    latest = checkpoint.Checkpoint.latest(state)
    assert latest is None or latest.next_seq <= 450

    gate.set()
    _, n_backfill = await asyncio.wait_for(registering, 60)
    got = await frames(st)
    backfill = [f for f in got if f.get("backfill")]
    assert got[: len(backfill)] == backfill, "the backfill comes first"
    live = got[len(backfill) :]
    assert [f["seq"] for f in live] == sorted(f["seq"] for f in live)

    oracle = make_engine("cpu")
    oracle.apply(with_seqs(head, 0))
    static = sorted(map(tuple, oracle.match_static(WEDGE).tolist()))
    assert n_backfill == len(backfill) == len(static) > 0
    assert sorted(tuple(f["match"]) for f in backfill) == static
    assert 2 * sum(parts) >= n_backfill, "most of the backfill went out in parts"
    assert [f["match"] for f in backfill] == oracle.match_static(WEDGE).tolist(), "in order"
    want = oracle_deltas(with_seqs(stream, 0), [(WEDGE, 450)])
    assert sorted(("wedge", f["sign"], f["seq"], tuple(f["match"])) for f in live) == want
    assert st.describe()["state"] == "live" and st.describe()["backfill_progress"] is None
    await until(lambda: (c := checkpoint.Checkpoint.latest(state)) is not None and c.next_seq > 450)
    await svc.stop()


async def test_a_deletion_waits_for_the_backfill_it_follows(
    tmp_path: Path, gate: threading.Event
) -> None:
    svc = Service(Settings(backend="cpu", state_dir=str(tmp_path / "state")))
    await svc.start()
    await svc.submit_updates(powerlaw_stream(40, 200, num_labels=1, seed=2), wait=True)
    spec = QuerySpec.from_pattern(WEDGE)
    registering = asyncio.create_task(svc.register_query(spec, "count", "json", True))
    await until(lambda: (q := svc.catalog.find("wedge")) is not None and q.live)
    st = svc.catalog.get("wedge")
    deleting = asyncio.create_task(svc.unregister_query("wedge"))
    await asyncio.sleep(0.3)
    assert not deleting.done() and not registering.done()
    gate.set()
    _, n = await asyncio.wait_for(registering, 60)
    _, final = await asyncio.wait_for(deleting, 60)
    assert n > 0 and final["backfill"] == n
    counts = await frames(st)
    assert counts[0]["backfill"] is True and counts[0]["count"] == n
    await svc.stop()


@pytest.mark.parametrize(("mode", "beside"), [("auto", False), ("inline", False), ("beside", True)])
async def test_backfill_mode_for_an_engine_without_snapshots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, beside: bool
) -> None:
    """Like the GPU engine: ``auto`` and ``inline`` backfill on the engine thread, ``beside``
    copies the exported graph to a host snapshot; the count is the same either way."""
    monkeypatch.setattr(CpuEngine, "static_snapshot", lambda self: None)
    started: list[BackfillJob] = []
    start = Backfiller.start
    monkeypatch.setattr(
        Backfiller, "start", lambda self, job: (started.append(job), start(self, job))
    )
    stream = powerlaw_stream(40, 300, num_labels=1, seed=2)
    svc = Service(Settings(backend="cpu", state_dir=None, backfill_mode=mode))
    await svc.start()
    await svc.submit_updates(stream, wait=True)
    _, n = await svc.register_query(QuerySpec.from_pattern(WEDGE), "count", "json", True)
    await svc.stop()
    oracle = make_engine("cpu")
    oracle.apply(stream)
    assert n == oracle.count_static(WEDGE) > 0
    assert len(started) == beside


async def test_a_capped_backfill_keeps_only_the_rows_it_ships(tmp_path: Path) -> None:
    """Past the query's max_deltas_per_update, beside the stream as inline: the first rows in
    the engine's order, then one overflow row with the exact rest; slices keep no more."""
    stream = powerlaw_stream(40, 300, num_labels=1, seed=2)
    got = {}
    for mode in ("beside", "inline"):
        svc = Service(
            Settings(backend="cpu", state_dir=None, backfill_mode=mode, max_deltas_per_update=7)
        )
        await svc.start()
        await svc.submit_updates(stream, wait=True)
        st, n = await svc.register_query(QuerySpec.from_pattern(WEDGE), "embeddings", "json", True)
        got[mode] = [
            {k: v for k, v in f.items() if k not in ("arrival_ts", "emitted_ts")}
            for f in await frames(st)
        ]
        await svc.stop()
    oracle = make_engine("cpu")
    oracle.apply(stream)
    total = oracle.count_static(WEDGE)
    rows, over = got["beside"][:7], got["beside"][7:]
    assert [f["match"] for f in rows] == oracle.match_static(WEDGE)[:7].tolist()
    assert len(over) == 1 and over[0]["shipped"] == 7 and over[0]["not_shipped"] == total - 7
    assert got["beside"] == got["inline"]


def test_an_uncapped_backfill_streams_its_rows_in_slice_order() -> None:
    """Slices finish in any order; the rows of those done in a row go out as parts, in slice
    order, and leave the job; the parts and the final event give the rows of one whole run,
    in its order, with the whole count."""
    engine = CpuEngine()
    engine.apply(powerlaw_stream(80, 450, num_labels=1, seed=5))
    snapshot = engine.static_snapshot()
    cmd = Register(qid=1, pattern=WEDGE, from_seq=450, count_only=False, backfill=True)
    job = BackfillJob(cmd, snapshot, 8)
    n = len(job.bounds) - 1
    assert n == 8 and job.streams
    events: list[Any] = []
    for i in (3, 0, 1, 5, 2, 4, 7, 6):
        if job.run_slice(i):
            job.hand_over(events.append, None)
        else:
            job.ship_ready(events.append)
    *parts, done = events
    assert isinstance(done, BackfillDone) and parts
    assert all(isinstance(p, BackfillPart) for p in parts)
    # Each part is the run of slices done in a row: 0; 1 (2 was not done); 2-3; 4-5 (6 was
    # not); the final event has 6-7.
    b = job.bounds
    rows_of = [snapshot.run(WEDGE, int(b[i]), int(b[i + 1]), True)[1] for i in range(n)]
    want = [np.concatenate([rows_of[i] for i in run]) for run in ([0], [1], [2, 3], [4, 5])]
    assert [p.matches.tolist() for p in parts] == [w.tolist() for w in want if len(w)]
    assert done.matches.tolist() == np.concatenate(rows_of[6:]).tolist()
    whole_count, whole = snapshot.run(WEDGE, 0, snapshot.num_vertices, True)
    rows = np.concatenate([p.matches for p in parts] + [done.matches])
    assert rows.tolist() == whole.tolist()
    assert done.count == whole_count == len(rows) == engine.count_static(WEDGE) > 0
    assert len(done.matches) < len(rows), "most rows went out before the end"
    assert all(len(m) == 0 for _, m in job._results[: job._shipped]), "shipped rows are dropped"


def test_a_capped_or_counted_backfill_does_not_stream() -> None:
    engine = CpuEngine()
    engine.apply(powerlaw_stream(80, 450, num_labels=1, seed=5))
    snapshot = engine.static_snapshot()
    for cap, count_only in ((5, False), (None, True)):
        cmd = Register(qid=1, pattern=WEDGE, from_seq=450, count_only=count_only,
                       backfill=True, max_deltas=cap)  # fmt: skip
        job = BackfillJob(cmd, snapshot, 4)
        assert not job.streams
        for i in range(len(job.bounds) - 2):
            job.run_slice(i)
            assert job.ship_ready(lambda e: pytest.fail(f"streamed {e}")) == 0


def test_a_count_past_what_a_count_frame_carries_is_refused_clearly() -> None:
    """A fan-out of a hub counts past 2^63 - 1 without a search (200 leaves taken 9 at a
    time): a counted backfill beside the stream ends with a clear error instead of a count
    frame that cannot hold it, and ``carried`` refuses it for an inline backfill."""
    engine = CpuEngine()
    n = 200
    engine.apply(UpdateBatch.from_arrays(np.ones(n), np.zeros(n), np.arange(1, n + 1)))
    star = Pattern.build("star10", [None] * 10, [(0, i, None) for i in range(1, 10)])
    want = engine.count_static(star)
    assert want == int(np.prod(np.arange(n - 8, n + 1, dtype=object))) > 2**63
    cmd = Register(qid=1, pattern=star, from_seq=n, count_only=True, backfill=True)
    job = BackfillJob(cmd, engine.static_snapshot(), 4)
    events: list[Any] = []
    for i in range(len(job.bounds) - 1):
        if job.run_slice(i):
            job.hand_over(events.append, None)
    [done] = events
    assert isinstance(done, BackfillDone) and done.error is not None
    assert "past 2^63 - 1" in str(done.error) and "star10" in str(done.error)
    with pytest.raises(EngineError, match="cannot carry"):
        carried(star, want)
    assert carried(star, 2**63 - 1) == 2**63 - 1
