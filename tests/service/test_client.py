"""``dcsm.client`` against a real ``dcsm serve``: every HTTP route (blocking and asyncio), the
error envelope as ApiError, websocket subscriptions in both frame encodings equal to the CPU
engine's deltas and counts, and deduplication across a service restart (kill -9: the
restarted service replays the frames since its last checkpoint with the same ids)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np
import pytest
from helpers import PATH, SQUARE, TRI, oracle_counts, oracle_deltas

import dcsm
from dcsm.client import (
    ApiError,
    AsyncClient,
    Client,
    Count,
    CountBatch,
    Delta,
    DeltaBatch,
    End,
    Gap,
    Subscription,
    encode_record,
    parse_frame,
)
from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.schemas import QuerySpec
from dcsm.service import frames
from dcsm.service.codec import decode_record


def as_tuple(d: Delta) -> tuple[str, int, int, tuple[int, ...]]:
    return (d.query, d.sign, d.seq, d.match)


async def collect(sub: Subscription, until: Any, timeout_s: float = 60.0) -> list[Any]:
    """Items of ``sub`` until ``until(items)`` holds, the iterator ends, or ``timeout_s``."""
    items: list[Any] = []

    async def run() -> None:
        async for item in sub:
            items.append(item)
            if until(items):
                return

    try:
        await asyncio.wait_for(run(), timeout_s)
    except TimeoutError:
        pass
    return items


async def subscribers(c: AsyncClient, name: str, n: int) -> None:
    """Wait until ``name`` has ``n`` websocket subscribers (so nothing posted next is missed)."""
    for _ in range(200):
        if (await c.get_query(name)).subscribers == n:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{name}: not {n} subscribers")


# -- no service --------------------------------------------------------------------------------


def test_both_frame_encodings_parse_to_the_same_rows() -> None:
    rng = np.random.default_rng(1)
    k = 7
    seq = np.arange(10, 10 + k, dtype=np.int64)
    sign = rng.choice(np.array([-1, 1], np.int8), k)
    match = rng.integers(0, 2**40, (k, 3))
    arrival = np.round(1e9 + rng.random(k), 6)  # the json encoding keeps microseconds
    texts, _ = frames.delta_frames("tri", sign, seq, match, arrival, 2e9)
    per_row = [parse_frame(t, 5.0) for t in texts]
    batch = parse_frame(frames.delta_batch_frame("tri", sign, seq, match, arrival, 2e9), 5.0)
    assert isinstance(batch, DeltaBatch) and all(isinstance(r, Delta) for r in per_row)
    assert list(batch.rows()) == per_row
    count = np.arange(1, k + 1)
    texts, _ = frames.count_frames("sq", sign, seq, count, arrival, 2e9, backfill=True)
    counts = parse_frame(frames.count_batch_frame("sq", sign, seq, count, arrival, 2e9, True), 5.0)
    assert isinstance(counts, CountBatch)
    assert list(counts.rows()) == [parse_frame(t, 5.0) for t in texts]
    assert all(isinstance(r, Count) and r.backfill for r in counts.rows())
    assert parse_frame(frames.gap_frame(3), 0.0) == Gap(3)
    assert parse_frame(frames.end_frame("deleted"), 0.0) == End("deleted")


def test_encode_record_is_what_the_service_decodes() -> None:
    batch = powerlaw_stream(50, 40, num_labels=3, seed=4)
    ts = 1.7e9 + np.arange(40) / 1000
    dicts = [{"op": "insert", "u": 1, "v": 2, "u_label": 1}, {"op": "delete", "u": 2, "v": 1}]
    for encoding in ("binary", "json"):
        got = decode_record(encode_record(batch, encoding, ts), 10_000)
        assert not got.errors and len(got) == 40
        for f in ("op", "u", "v", "label", "u_label", "v_label"):
            assert np.array_equal(getattr(got.updates, f), getattr(batch, f)), (encoding, f)
        assert np.allclose(got.updates.ts, ts)
        small = decode_record(encode_record(dicts, encoding), 10)
        assert small.updates.u.tolist() == [1, 2] and small.updates.u_label.tolist() == [1, -1]


# -- HTTP ----------------------------------------------------------------------------------


def test_blocking_client_covers_every_route(service: ServiceProcess) -> None:
    batch = powerlaw_stream(60, 300, num_labels=2, seed=3)
    expected = oracle_deltas(batch, [(TRI, 0)])
    with Client(service.base_url) as c:
        assert c.health() and c.ready()
        st = c.status()
        assert st.version == dcsm.__version__ and st.next_seq == 0 and st.processed_seq == -1
        q = c.register_query(TRI)  # a Pattern
        assert (q.name, q.mode, q.from_seq, q.state) == ("tri", "embeddings", 0, "live")
        assert QuerySpec.model_validate(q.spec).to_pattern().edges.tolist() == TRI.edges.tolist()
        with pytest.raises(ApiError) as info:
            c.register_query(QuerySpec.from_pattern(TRI))
        assert (info.value.status, info.value.code) == (409, "already_exists")
        assert "tri" in info.value.message

        res = c.post_updates(batch.slice(0, 200))  # an UpdateBatch
        assert res.applied and (res.accepted, res.first_seq, res.last_seq) == (200, 0, 199)
        assert sum(res.outcomes.values()) == 200 and res.rejected == []
        rest = [{"op": "insert" if o > 0 else "delete", "u": u, "v": v, "label": lab}
                | ({"u_label": a} if a >= 0 else {}) | ({"v_label": b} if b >= 0 else {})
                for o, u, v, lab, a, b in zip(*(getattr(batch.slice(200, 300), f).tolist() for f in
                ("op", "u", "v", "label", "u_label", "v_label")), strict=True)]  # fmt: skip
        res = c.post_updates(rest, wait=False)  # dicts, answered once durable
        assert not res.applied and res.accepted == 100 and res.first_seq == 200

        q = c.register_query(QuerySpec.from_pattern(PATH).model_dump(), mode="count")
        assert q.mode == "count" and q.from_seq == 300
        page = c.list_queries(page_size=1)
        assert [x.name for x in page.items] == ["path"] and page.next_page_token
        assert [x.name for x in c.iter_queries(page_size=1)] == ["path", "tri"]

        for _ in range(100):
            if c.status().processed_seq == 299:
                break
            time.sleep(0.05)
        plus = sum(1 for d in expected if d[1] == 1)
        got = c.get_query("tri")
        assert got.stats is not None and got.stats["deltas"] == {
            "+": plus,
            "-": len(expected) - plus,
        }
        assert got.subscribers == 0
        assert "dcsm_next_seq 300.0" in c.metrics()
        final = c.delete_query("tri")
        assert final.stats is not None and final.stats["updates_seen"] == 300
        with pytest.raises(ApiError) as info:
            c.get_query("tri")
        assert (info.value.status, info.value.code) == (404, "not_found")
        with pytest.raises(ApiError) as info:
            c.register_query({"name": "x", "vertices": [{"id": 0}, {"id": 1}],
                              "edges": [{"u": 0, "v": 0}]})  # fmt: skip
        assert info.value.status == 422 and info.value.code == "invalid_argument"
        assert info.value.details[0]["field"] == "edges[0]"
        with pytest.raises(ApiError) as info:
            c.post_updates([{"op": "insert", "u": 1, "v": 1}])
        assert info.value.status == 422


async def test_async_client_and_subscriptions_match_the_engine(service: ServiceProcess) -> None:
    batch = powerlaw_stream(120, 1500, num_labels=2, seed=21)
    exp_tri = oracle_deltas(batch, [(TRI, 0)])
    exp_sq = {s: c for s, c in oracle_counts(batch, SQUARE).items() if c}
    assert len(exp_tri) > 100 and exp_sq
    async with AsyncClient(service.base_url) as c:
        await c.wait_ready()
        assert (await c.register_query(TRI)).from_seq == 0
        assert (await c.register_query(SQUARE, mode="count")).mode == "count"
        # The first matches subscriber (json) takes everything since registration; a batch
        # subscriber and the count subscriber (mode found by asking the service) from now on.
        subs = [c.subscribe("tri", encoding="json"), c.subscribe("tri", encoding="batch"),
                c.subscribe("square")]  # fmt: skip
        # Each ends at the query's deletion (an End item), so wait for that.
        ended = lambda items: bool(items) and isinstance(items[-1], End)  # noqa: E731
        tasks = [asyncio.create_task(collect(s, ended)) for s in subs]
        await subscribers(c, "tri", 2)
        await subscribers(c, "square", 1)
        for i in range(0, len(batch), 250):
            res = await c.post_updates(batch.slice(i, i + 250))
            assert res.accepted == 250
        st = await c.status()
        assert st.processed_seq == len(batch) - 1 and st.queries == 2
        await asyncio.sleep(0.3)
        for name in ("tri", "square"):
            await c.delete_query(name)
        json_items, batch_items, sq_items = await asyncio.gather(*tasks)
    for items in (json_items, batch_items):
        assert isinstance(items[-1], End)
        assert not any(isinstance(x, Gap) for x in items)
        assert sorted(as_tuple(d) for d in items if isinstance(d, Delta)) == exp_tri
        assert len({d.id for d in items if isinstance(d, Delta)}) == len(exp_tri)
    counts: dict[int, int] = {}
    for x in sq_items[:-1]:
        assert isinstance(x, Count)
        counts[x.seq] = counts.get(x.seq, 0) + x.sign * x.count
    assert counts == exp_sq
    assert all(s.duplicates == 0 for s in subs)


async def test_subscription_batches_and_errors(service: ServiceProcess) -> None:
    batch = powerlaw_stream(80, 600, num_labels=2, seed=5)
    exp = oracle_deltas(batch, [(TRI, 0)])
    async with AsyncClient(service.base_url) as c:
        with pytest.raises(ApiError) as info:
            await collect(c.subscribe("nope", counts=False, reconnect=False), lambda _: False)
        assert (info.value.status, info.value.code) == (404, "not_found")
        await c.register_query(TRI)
        await c.register_query(SQUARE, mode="count")
        with pytest.raises(ApiError) as info:  # a count-mode query has no delta stream
            await collect(c.subscribe("square", counts=False, reconnect=False), lambda _: False)
        assert (info.value.status, info.value.code) == (409, "wrong_kind")
        sub = c.subscribe("tri", encoding="batch")
        got: list[DeltaBatch] = []

        async def read() -> None:
            async for b in sub.batches():
                if isinstance(b, End):
                    return
                assert isinstance(b, DeltaBatch)
                got.append(b)

        task = asyncio.create_task(read())
        await subscribers(c, "tri", 1)
        await c.post_updates(batch)
        await asyncio.sleep(0.3)
        await c.delete_query("tri")
        await asyncio.wait_for(task, 30)
    seq = np.concatenate([b.seq for b in got])
    rows = sorted(
        ("tri", int(s), int(q), tuple(m))
        for b in got
        for s, q, m in zip(b.sign.tolist(), b.seq.tolist(), b.match.tolist(), strict=True)
    )
    assert rows == exp and len(seq) == len(exp)
    ids = np.concatenate([b.ids for b in got])
    assert ids.dtype == np.uint64 and len(np.unique(ids)) == len(exp)


async def test_dedupe_by_id_across_a_restart(tmp_path) -> None:
    """kill -9 before any checkpoint: the restarted service replays every update from its
    update log and emits every frame again with the same ids; the subscription reconnects
    and yields each delta once."""
    batch = powerlaw_stream(100, 1200, num_labels=2, seed=8)
    head, tail = batch.slice(0, 700), batch.slice(700, 1200)
    expected = oracle_deltas(batch, [(TRI, 0)])
    exp_head = [d for d in expected if d[2] < 700]
    assert exp_head and len(exp_head) < len(expected)
    state = tmp_path / "state"
    first = ServiceProcess(workdir=tmp_path, state_dir=state).start()
    second = None
    try:
        async with AsyncClient(first.base_url) as c:
            await c.register_query(TRI)
            sub = c.subscribe("tri", encoding="batch", reconnect_timeout_s=120)
            deltas: list[Delta] = []
            seen_all = asyncio.Event()

            async def read() -> None:
                async for x in sub:
                    if isinstance(x, Delta):
                        deltas.append(x)
                        if len(deltas) == len(expected):
                            seen_all.set()

            task = asyncio.create_task(read())
            await subscribers(c, "tri", 1)
            await c.post_updates(head)
            for _ in range(200):
                if len(deltas) >= len(exp_head):
                    break
                await asyncio.sleep(0.05)
            assert sorted(as_tuple(d) for d in deltas) == exp_head
            first.kill()
            second = ServiceProcess(workdir=tmp_path, state_dir=state, port=first.port)
            await asyncio.to_thread(second.start)
            await c.wait_ready()
            # The replayed frames reach the subscription (it reconnects within ~0.2 s).
            for _ in range(400):
                if sub.duplicates >= len(exp_head):
                    break
                await asyncio.sleep(0.05)
            assert sub.reconnects == 1 and sub.duplicates == len(exp_head)
            await c.post_updates(tail)
            await asyncio.wait_for(seen_all.wait(), 60)
            await asyncio.sleep(0.3)
            await sub.close()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    finally:
        first.kill()
        if second is not None:
            second.terminate()
    assert sorted(as_tuple(d) for d in deltas) == expected
