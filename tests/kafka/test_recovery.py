"""Recovery after kill -9, and what happens when the state directory is missing or
corrupt: the issue's scenario (a query and the graph survive a crash), a refusal to start
empty where Kafka says there was state, --reset-state, and the fall-back to the previous
checkpoint."""

from __future__ import annotations

import asyncio
import shutil
import time

import numpy as np
import pytest
from helpers import TRI, http_client, oracle_counts, spec, wait_processed

from dcsm.loadgen.producer import produce_paced
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import UpdateBatch
from dcsm.service.checkpoint import NEWEST, PREVIOUS, Checkpoint
from dcsm.service.codec import encode_binary

pytestmark = pytest.mark.kafka

FAST = ("--checkpoint-interval-s", "0.2")


def records(batch: UpdateBatch, per: int = 100) -> list[bytes]:
    return [encode_binary(batch.slice(i, i + per)) for i in range(0, len(batch), per)]


async def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    """All at once (every send time is now)."""
    await produce_paced(bootstrap, topic, values, np.full(len(values), time.time()))


async def static_triangles(base_url: str, name: str) -> int:
    async with http_client(base_url) as c:
        body = spec(TRI, name=name, mode="count")
        r = await c.post("/api/v1/queries?backfill=true", json=body)
        assert r.status_code == 201, r.text
        return int(r.json()["backfill"])


async def test_kill_9_keeps_the_query_and_the_graph(broker, topics, make_service) -> None:
    stream = powerlaw_stream(300, 4500, seed=21)
    head, tail = stream.slice(0, 3000), stream.slice(3000, 4500)
    svc = make_service(*FAST)
    async with http_client(svc.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
        await produce(broker.bootstrap, topics.updates, records(head))
        await wait_processed(c, len(head) - 1)
        await asyncio.sleep(0.6)  # a checkpoint covers some of it; the crash loses nothing
    svc.kill()
    again = make_service(*FAST, state_dir=svc.state_dir)
    async with http_client(again.base_url) as c:
        r = await c.get("/api/v1/queries/tri")
        assert r.status_code == 200, "the registered query survives kill -9"
        assert r.json()["from_seq"] == 0
        await produce(broker.bootstrap, topics.updates, records(tail))
        await wait_processed(c, len(stream) - 1)
        stats = (await c.get("/api/v1/queries/tri")).json()["stats"]
    expected = oracle_counts(stream, TRI)
    assert stats["updates_seen"] == len(stream)
    assert stats["deltas"]["+"] - stats["deltas"]["-"] == sum(expected.values())
    # The graph of all updates: its triangles, counted from scratch, equal the net deltas.
    assert await static_triangles(again.base_url, "tri_static") == sum(expected.values())


async def test_refuses_to_start_empty_where_kafka_has_committed_offsets(
    broker, topics, make_service, tmp_path
) -> None:
    stream = powerlaw_stream(100, 600, seed=4)
    svc = make_service(*FAST)
    async with http_client(svc.base_url) as c:
        await produce(broker.bootstrap, topics.updates, records(stream))
        await wait_processed(c, len(stream) - 1)
    assert svc.terminate() == 0, svc.log()  # the final checkpoint commits the offsets
    with pytest.raises(RuntimeError) as err:
        make_service(state_dir=tmp_path / "elsewhere")
    message = str(err.value)
    assert "exited with 1" in message
    assert "has committed offsets" in message and "--reset-state" in message
    # --reset-state starts empty from the earliest offset: the whole topic again.
    fresh = make_service("--reset-state", state_dir=tmp_path / "elsewhere")
    async with http_client(fresh.base_url) as c:
        await wait_processed(c, len(stream) - 1)
        assert (await c.get("/api/v1/status")).json()["next_seq"] == len(stream)


async def test_a_corrupt_checkpoint_falls_back_to_the_previous_one(
    broker, topics, make_service
) -> None:
    stream = powerlaw_stream(200, 2000, seed=8)
    expected = sum(oracle_counts(stream, TRI).values())
    svc = make_service(*FAST)
    async with http_client(svc.base_url) as c:
        await produce(broker.bootstrap, topics.updates, records(stream.slice(0, 1000)))
        await wait_processed(c, 999)
        await asyncio.sleep(0.5)
        await produce(broker.bootstrap, topics.updates, records(stream.slice(1000, 2000)))
        await wait_processed(c, 1999)
        await asyncio.sleep(0.5)
    svc.kill()
    state = svc.state_dir
    assert (state / PREVIOUS).exists()
    newest = (state / NEWEST).read_bytes()
    (state / NEWEST).write_bytes(newest[: len(newest) // 2])  # torn
    again = make_service(state_dir=state)
    assert "falling back to the previous checkpoint" in again.log(tail=1 << 20)
    async with http_client(again.base_url) as c:
        await wait_processed(c, 1999)
    assert await static_triangles(again.base_url, "t") == expected
    again.kill()
    # Both unusable: a clear refusal, never an empty start.
    for name in (NEWEST, PREVIOUS):
        (state / name).write_bytes(b"not a checkpoint")
    with pytest.raises(RuntimeError) as err:
        make_service(state_dir=state)
    assert "no usable checkpoint" in str(err.value)
    shutil.rmtree(state)


def test_checkpoint_files_round_trip(tmp_path) -> None:
    from dcsm.model import Graph

    g = powerlaw_stream(50, 200, seed=1)
    graph = Graph(g.u[:5], g.u_label[:5] * 0, g.u[:3], g.v[:3], g.label[:3])
    Checkpoint(graph, 7, [{"name": "q"}], {"kafka:t": {0: 9}}, 2).save(tmp_path)
    Checkpoint(graph, 9, [], {"kafka:t": {0: 11}}, 3).save(tmp_path)
    got = Checkpoint.latest(tmp_path)
    assert got is not None and (got.next_seq, got.log_entries) == (9, 3)
    assert got.positions == {"kafka:t": {0: 11}}
    prev = Checkpoint.read(tmp_path / PREVIOUS)
    assert (prev.next_seq, prev.queries) == (7, [{"name": "q"}])
