"""Replicas (issue 12): N ``dcsm serve --replicas N --replica-index I`` processes on one input
topic are one logical service. On a mixed stream (insertions and deletions) with queries
registered and deleted mid-stream through different replicas, the union of their frames on
``dcsm.matches`` is exactly the multiset a single service emits reading the same topic
(control records included), in both shard modes; a replica killed mid-stream and restarted
gives the same after deduplication by id."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

import pytest
from helpers import (
    PATH,
    SQUARE,
    TRI,
    consume_topic,
    http_client,
    read_frames,
    spec,
    wait_processed,
    ws_connect,
)
from test_recovery import FAST, produce, records

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.replicas import owner_of

pytestmark = pytest.mark.kafka

Row = tuple[Any, ...]


def rows(msgs: list[Any]) -> list[tuple[str, Row]]:
    """(id, content) of every delta, count and overflow row in the records of a matches
    topic (json frames, one per record, or a list of them)."""
    out = []
    for m in msgs:
        body = json.loads(m.value)
        for f in body if isinstance(body, list) else [body]:
            if "id" not in f:
                continue
            kind = f.get("type", "delta")
            what = tuple(f["match"]) if kind == "delta" else f.get("count", f.get("not_shipped"))
            row = (f["query"], kind, f["seq"], f["sign"], what, bool(f.get("backfill")))
            out.append((str(f["id"]), row))
    return out


def replica_flags(n: int, i: int, shard: str) -> list[str]:
    return ["--replicas", str(n), "--replica-index", str(i), "--shard", shard]


async def wait_all(svcs: list[ServiceProcess], seq: int) -> None:
    for svc in svcs:
        async with http_client(svc.base_url) as c:
            await wait_processed(c, seq, timeout_s=120)


async def listing(svc: ServiceProcess) -> list[dict[str, Any]]:
    async with http_client(svc.base_url) as c:
        items = (await c.get("/api/v1/queries")).json()["items"]
    return [{k: v for k, v in it.items() if k != "state"} for it in items]


async def reference(broker, topics, make_service, tmp_path, last_seq: int) -> list:
    """What one service emits reading the same input topic (its own group and output)."""
    ref_topic = topics.matches + ".ref"
    one = make_service(
        "--matches-topic", ref_topic, "--consumer-group", topics.group + ".ref",
        state_dir=tmp_path / "ref",
    )  # fmt: skip
    await wait_all([one], last_seq)
    return rows(await consume_topic(broker.bootstrap, ref_topic, 1, 60))


async def drive(
    broker, topics, svcs: list[ServiceProcess], kill: Any = None
) -> tuple[int, list[str]]:
    """Register and delete queries through different replicas while the stream flows;
    ``kill(svcs)`` runs mid-stream (and may replace a replica in ``svcs``)."""
    stream = powerlaw_stream(300, 3000, seed=12)
    parts = [records(stream.slice(a, a + 750)) for a in range(0, 3000, 750)]
    n = len(svcs)
    names = []

    async def post(i: int, body: dict[str, Any], query: str = "") -> None:
        async with http_client(svcs[i % n].base_url) as c:
            r = await c.post("/api/v1/queries" + query, json=body)
            assert r.status_code == 201, r.text
            names.append(body["name"])

    await post(0, spec(TRI))
    await produce(broker.bootstrap, topics.updates, parts[0])
    await wait_all(svcs, 749)
    # Mid-stream, while records flow: through replicas 1 and 2.
    sending = asyncio.create_task(produce(broker.bootstrap, topics.updates, parts[1]))
    await post(1, spec(PATH), "?backfill=true")
    await post(2, spec(SQUARE, mode="count"))
    await sending
    await asyncio.sleep(0.5)  # checkpoints cover some of it
    if kill is not None:
        sending = asyncio.create_task(produce(broker.bootstrap, topics.updates, parts[2]))
        await asyncio.sleep(0.2)
        await kill(svcs)
        await sending
    else:
        await produce(broker.bootstrap, topics.updates, parts[2])
    await post(n - 1, spec(TRI, name="tri_count", mode="count"), "?backfill=true")
    async with http_client(svcs[-1].base_url) as c:  # a deletion through the last replica
        assert (await c.delete("/api/v1/queries/tri")).status_code == 200
    await produce(broker.bootstrap, topics.updates, parts[3])
    await wait_all(svcs, len(stream) - 1)
    return len(stream) - 1, names


MODES = [(2, "queries"), (2, "updates"), (3, "queries"), (3, "updates")]


@pytest.mark.parametrize("n,shard", MODES)
async def test_replicas_emit_exactly_what_one_service_does(
    n, shard, broker, topics, make_service, tmp_path
) -> None:
    svcs = [
        make_service(*FAST, *replica_flags(n, i, shard), state_dir=tmp_path / f"r{i}")
        for i in range(n)
    ]
    last, names = await drive(broker, topics, svcs)
    first = await listing(svcs[0])
    assert [q["name"] for q in first] == sorted(set(names) - {"tri"})
    for svc in svcs[1:]:
        assert await listing(svc) == first, "every replica lists the same queries"
    got = rows(await consume_topic(broker.bootstrap, topics.matches, 1, 60))
    want = await reference(broker, topics, make_service, tmp_path, last)
    assert len(want) > 1000
    assert Counter(r for _, r in got) == Counter(r for _, r in want)
    assert Counter(i for i, _ in got) == Counter(i for i, _ in want), "no delta twice"
    if shard == "queries":  # each query's rows come from its owner alone
        owners = {owner_of(name, n) for name in names}
        assert len(owners) > 1, "the test's queries land on more than one replica"


async def test_a_replica_killed_mid_stream_catches_up(
    broker, topics, make_service, tmp_path
) -> None:
    n, shard = 2, "updates"
    svcs = [
        make_service(*FAST, *replica_flags(n, i, shard), state_dir=tmp_path / f"r{i}")
        for i in range(n)
    ]

    async def kill(live: list[ServiceProcess]) -> None:
        victim = live[1]
        victim.kill()
        # The other replica never waits for it: it goes on reading meanwhile.
        live[1] = make_service(*FAST, *replica_flags(n, 1, shard), state_dir=victim.state_dir)
        assert "restoring checkpoint" in live[1].log(tail=1 << 20)

    last, _ = await drive(broker, topics, svcs, kill)
    async with http_client(svcs[1].base_url) as c:
        ready = (await c.get("/readyz")).json()
    assert ready["ready"] and ready["replica"] == {"index": 1, "replicas": 2, "shard": shard}
    got = dict(rows(await consume_topic(broker.bootstrap, topics.matches, 1, 60)))
    want = dict(await reference(broker, topics, make_service, tmp_path, last))
    assert got == want, "the exact rows once deduplicated by id"


async def test_replica_indexes_own_their_inputs_apart(broker, topics, make_service, tmp_path):
    make_service(*replica_flags(2, 0, "queries"), state_dir=tmp_path / "a")
    make_service(*replica_flags(2, 1, "queries"), state_dir=tmp_path / "b")
    with pytest.raises(RuntimeError) as err:
        make_service(*replica_flags(2, 1, "queries"), state_dir=tmp_path / "c")
    assert "is already consumed by another dcsm service" in str(err.value)
    assert f"{topics.group}.1.owner" in str(err.value)


@pytest.mark.parametrize("shard", ["queries", "updates"])
async def test_a_websocket_on_any_replica_gets_every_delta(
    shard, broker, topics, make_service, tmp_path
) -> None:
    svcs = [
        make_service(*replica_flags(2, i, shard), state_dir=tmp_path / f"r{i}") for i in range(2)
    ]
    name = next(f"tri{k}" for k in range(100) if owner_of(f"tri{k}", 2) == 1)
    async with http_client(svcs[1].base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI, name=name))).status_code == 201
    stream = powerlaw_stream(200, 1500, seed=3)
    async with ws_connect(svcs[0].ws_url(name)) as ws:  # replica 0: not (all) its deltas
        await produce(broker.bootstrap, topics.updates, records(stream))
        await wait_all(svcs, len(stream) - 1)
        published = rows(await consume_topic(broker.bootstrap, topics.matches, 1, 60))
        frames = await read_frames(ws, until=len(published), timeout_s=60)
    assert len(published) > 100
    seen = [str(f["id"]) for f in frames if "type" not in f]
    assert sorted(seen) == sorted(i for i, _ in published), "every delta, once"
