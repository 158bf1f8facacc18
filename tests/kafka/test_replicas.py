"""Replicas (issue 12): N ``dcsm serve --replicas N --replica-index I`` processes on one input
topic are one logical service. On a mixed stream (insertions and deletions) with queries
registered and deleted mid-stream through different replicas, the union of their frames on
``dcsm.matches`` is exactly the multiset a single service emits reading the same topic
(control records included), in both shard modes; a replica killed mid-stream and restarted
gives the same after deduplication by id. In shard mode ``queries`` every replica places each
query on the same replica (the least loaded, or the one the registration pins), and keeps it
there across restarts."""

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
    oracle_deltas,
    read_frames,
    spec,
    wait_processed,
    ws_connect,
)
from test_recovery import FAST, produce, records

from dcsm.client import AsyncClient
from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream

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


async def settled(svcs: list[ServiceProcess], timeout_s: float = 120) -> list[dict[str, Any]]:
    """Wait until no replica holds rows back: no backfill running beside the stream (its
    query's live rows wait for it, past ``processed_seq``) and no frame buffered for the
    matches topic. Each replica's queries and output status, for a failure's message."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        seen = []
        for svc in svcs:
            async with http_client(svc.base_url) as c:
                out = (await c.get("/api/v1/status")).json()["kafka"]["output"]
                items = (await c.get("/api/v1/queries")).json()["items"]
            # A backfill holds its query's rows, one being deleted too ("deleting").
            held = {q["name"]: q["backfill_progress"] for q in items
                    if q["backfill_progress"] is not None}  # fmt: skip
            seen.append({"replica": svc.base_url, "output": out, "backfilling": held})
        if all(not s["backfilling"] and not s["output"]["buffered_frames"] for s in seen):
            return seen
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"rows still held after {timeout_s:.0f}s: {seen}")
        await asyncio.sleep(0.1)


def difference(got: list[tuple[str, Row]], want: list[tuple[str, Row]]) -> str:
    """Rows missing from ``got`` and extra in it, counted by (query, kind, seq parity), with
    a few of each: what a failure says instead of a dict diff of thousands of rows."""
    g, w = dict(got), dict(want)
    missing = [w[i] for i in w.keys() - g.keys()]
    extra = [g[i] for i in g.keys() - w.keys()]
    changed = [(w[i], g[i]) for i in w.keys() & g.keys() if w[i] != g[i]]

    def tally(rs: list[Row]) -> dict:
        return dict(Counter((r[0], r[1], r[2] % 2) for r in rs))

    return (f"missing {len(missing)} {tally(missing)} e.g. {sorted(missing)[:3]}; "
            f"extra {len(extra)} {tally(extra)} e.g. {sorted(extra)[:3]}; "
            f"changed {len(changed)} e.g. {changed[:3]}")  # fmt: skip


async def published(broker, topics, svcs: list[ServiceProcess], want: list) -> list:
    """The replicas' matches topic once it holds as many distinct delta ids as ``want`` (or
    60 s passed), then 1 s idle (extras are caught); read once no replica holds rows back
    (:func:`settled`). Every replica reports no failed delivery: a missing row is then a
    lost one, not a slow producer."""
    for s in await settled(svcs):
        assert s["output"]["delivery_failures"] == 0, s
    n = len({i for i, _ in want})
    msgs = await consume_topic(broker.bootstrap, topics.matches, 1, 60,
                               enough=lambda m: len({i for i, _ in rows(m)}) >= n)  # fmt: skip
    for s in await settled(svcs):  # nor while it was read (a broker slower than its timeout)
        assert s["output"]["delivery_failures"] == 0, s
    return rows(msgs)


async def reference(broker, topics, make_service, tmp_path, last_seq: int) -> list:
    """What one service emits reading the same input topic (its own group and output)."""
    ref_topic = topics.matches + ".ref"
    one = make_service(
        "--matches-topic", ref_topic, "--consumer-group", topics.group + ".ref",
        state_dir=tmp_path / "ref",
    )  # fmt: skip
    await wait_all([one], last_seq)
    await settled([one])
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
# Where drive()'s queries end up in shard mode queries, by load: tri, path and square go to
# 0, 1, 2 (mod N) as they come; tri_count is registered while tri still counts (N=2: 2 on
# replica 0, 1 on replica 1 -> 1; N=3: one each -> 0), and tri is deleted after.
DRIVE_OWNERS = {
    2: {"path": 1, "square": 0, "tri_count": 1},
    3: {"path": 1, "square": 2, "tri_count": 0},
}


async def owner_stats(svcs: list[ServiceProcess], name: str) -> list[int]:
    """The + deltas each replica counted for ``name`` (only its owner's are real)."""
    out = []
    for svc in svcs:
        async with http_client(svc.base_url) as c:
            out.append((await c.get(f"/api/v1/queries/{name}")).json()["stats"]["deltas"]["+"])
    return out


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
    want = await reference(broker, topics, make_service, tmp_path, last)
    got = await published(broker, topics, svcs, want)
    assert len(want) > 1000
    assert Counter(r for _, r in got) == Counter(r for _, r in want), difference(got, want)
    assert Counter(i for i, _ in got) == Counter(i for i, _ in want), "no delta twice"
    owners = {q["name"]: q["replica"] for q in first}
    if shard == "updates":  # every replica matches every query
        assert owners == dict.fromkeys(owners)
        return
    assert owners == DRIVE_OWNERS[n], "placed by load, alike on every replica"
    for name, owner in owners.items():  # each query is matched by its owner alone
        plus = await owner_stats(svcs, name)
        assert plus[owner] > 0 and sum(plus) == plus[owner], (name, plus)


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
    want = await reference(broker, topics, make_service, tmp_path, last)
    got = await published(broker, topics, svcs, want)
    assert dict(got) == dict(want), difference(got, want)  # the exact rows, deduplicated by id


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
    name = "tri1"
    async with http_client(svcs[1].base_url) as c:
        pinned = await c.post("/api/v1/queries", json=spec(TRI, name=name, replica=1))
        if shard == "updates":  # every replica matches every query: a pin makes no sense
            assert pinned.status_code == 400, pinned.text
            assert "only with --shard queries" in pinned.json()["error"]["message"]
            pinned = await c.post("/api/v1/queries", json=spec(TRI, name=name))
        assert pinned.status_code == 201, pinned.text
        assert pinned.json()["replica"] == (1 if shard == "queries" else None)
    stream = powerlaw_stream(200, 1500, seed=3)
    # Replica 0 knows the query once it has read the registration's control record from the
    # input topic; a websocket opened before that is closed as "not found".
    async with http_client(svcs[0].base_url) as c:
        for _ in range(600):
            if (await c.get(f"/api/v1/queries/{name}")).status_code == 200:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"replica 0 never learned of {name}")
    async with ws_connect(svcs[0].ws_url(name)) as ws:  # replica 0: not (all) its deltas
        await produce(broker.bootstrap, topics.updates, records(stream))
        await wait_all(svcs, len(stream) - 1)
        published = rows(await consume_topic(broker.bootstrap, topics.matches, 1, 60))
        frames = await read_frames(ws, until=len(published), timeout_s=60)
    assert len(published) > 100
    seen = [str(f["id"]) for f in frames if "type" not in f]
    assert sorted(seen) == sorted(i for i, _ in published), "every delta, once"


async def register(svc: ServiceProcess, body: dict[str, Any]) -> dict[str, Any]:
    async with http_client(svc.base_url) as c:
        r = await c.post("/api/v1/queries", json=body)
    assert r.status_code == 201, r.text
    return r.json()


async def placements(svcs: list[ServiceProcess]) -> list[dict[str, int | None]]:
    """Each replica's {query: owner}, from GET /api/v1/queries."""
    return [{q["name"]: q["replica"] for q in await listing(svc)} for svc in svcs]


async def checkpoint_seq(svc: ServiceProcess) -> int | None:
    async with http_client(svc.base_url) as c:
        ckpt = (await c.get("/api/v1/status")).json()["checkpoint"]
    return ckpt["next_seq"] if ckpt else None


async def test_queries_are_placed_by_load_or_pin_and_keep_their_replica(
    broker, topics, make_service, tmp_path
) -> None:
    # A checkpoint every 1000 updates only: replica 1 is killed after the first, before the
    # second, so its restart replays the later registrations and must place them alike.
    every_1000 = ("--checkpoint-interval-s", "3600", "--checkpoint-interval-updates", "1000")

    def start(i: int) -> ServiceProcess:
        flags = replica_flags(2, i, "queries")
        return make_service(*every_1000, *flags, state_dir=tmp_path / f"r{i}")

    svcs = [start(0), start(1)]
    stream = powerlaw_stream(300, 3000, seed=5)
    bounds = ((0, 1000), (1000, 1500), (1500, 3000))
    part_a, part_b, part_c = (records(stream.slice(a, b)) for a, b in bounds)
    four = [
        spec(TRI, name="q0"), spec(PATH, name="q1"), spec(TRI, name="q2", mode="count"),
        spec(SQUARE, name="q3", mode="count"),
    ]  # fmt: skip
    for k, body in enumerate(four):  # through both replicas: 2 on each
        got = await register(svcs[k % 2], body)
        assert (got["replica"], got["pinned"]) == (k % 2, False)
    async with http_client(svcs[0].base_url) as c:
        r = await c.post("/api/v1/queries", json=spec(TRI, name="nowhere", replica=2))
    assert r.status_code == 400, r.text
    assert r.json()["error"]["details"][0]["field"] == "replica"
    assert "replicas 0..1" in r.json()["error"]["message"]
    await produce(broker.bootstrap, topics.updates, part_a)  # seqs 0-999
    await wait_all(svcs, 999)
    deadline = asyncio.get_running_loop().time() + 30
    while (await checkpoint_seq(svcs[1]) or 0) < 1000:
        assert asyncio.get_running_loop().time() < deadline, "no checkpoint after 1000 updates"
        await asyncio.sleep(0.1)

    # At seq 1000: q0 (owner 0) deleted; heavy pinned to 1 although load says 0 (1 vs 2);
    # after, by load (0: q2; 1: q1, q3, heavy) -> 0.
    async with http_client(svcs[1].base_url) as c:
        assert (await c.delete("/api/v1/queries/q0")).status_code == 200
    client = AsyncClient(svcs[0].base_url)  # the client's pin: register_query(replica=1)
    heavy = await client.register_query(spec(TRI, name="heavy"), replica=1)
    await client.close()
    assert (heavy.replica, heavy.pinned) == (1, True)
    after = await register(svcs[1], spec(PATH, name="after", mode="count"))
    assert (after["replica"], after["pinned"]) == (0, False)
    expected = {"after": 0, "heavy": 1, "q1": 1, "q2": 0, "q3": 1}
    assert await placements(svcs) == [expected, expected], "the same owners on every replica"
    await produce(broker.bootstrap, topics.updates, part_b)  # seqs 1000-1499
    await wait_all(svcs, 1499)

    # Killed: replica 1 restores its checkpoint (at seq 1000, before the deletion and both
    # registrations) and replays those from the topic.
    svcs[1].kill()
    svcs[1] = start(1)
    assert "restoring checkpoint" in svcs[1].log(tail=1 << 20)
    restored = await checkpoint_seq(svcs[1])
    assert restored == 1000, restored
    await wait_all(svcs, 1499)
    assert await placements(svcs) == [expected, expected], "replayed records placed alike"

    # Both stopped and restarted: the owners are kept, not recomputed (recomputing the five
    # in qid order would give q1, q2, q3, heavy, after -> 0, 1, 0, 1, 0).
    for svc in svcs:
        assert svc.terminate() == 0, svc.log()
    svcs = [start(0), start(1)]
    assert await placements(svcs) == [expected, expected], "kept across restarts"
    late = await register(svcs[1], spec(TRI, name="late", mode="count"))  # at seq 1500
    assert late["replica"] == 0, "placed by the restored load (0: q2, after; 1: three)"
    await produce(broker.bootstrap, topics.updates, part_c)  # seqs 1500-2999
    await wait_all(svcs, 2999)
    expected["late"] = 0
    assert await placements(svcs) == [expected, expected]
    for name, owner in expected.items():  # each query is matched by its owner alone
        plus = await owner_stats(svcs, name)
        assert plus[owner] > 0 and sum(plus) == plus[owner], (name, plus)

    want = await reference(broker, topics, make_service, tmp_path, 2999)
    got = await published(broker, topics, svcs, want)
    assert len(want) > 1000
    assert dict(got) == dict(want), difference(got, want)  # one service's rows, deduplicated


async def test_a_name_deleted_and_taken_again_at_once(
    broker, topics, make_service, tmp_path
) -> None:
    """A deletion's control record and a registration of the same name right behind it, read
    in one poll: the ingest applies the second before the fan-out has removed the first (as
    a replica may, whichever replica's API took them). The name is taken again at that seq:
    the two queries' deltas together are every triangle delta of the stream."""
    from aiokafka import AIOKafkaProducer

    from dcsm.service.replicas import CONTROL_HEADER, register_record, unregister_record

    svcs = [
        make_service(*FAST, *replica_flags(2, i, "updates"), state_dir=tmp_path / f"r{i}")
        for i in range(2)
    ]
    async with http_client(svcs[0].base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
    stream = powerlaw_stream(200, 1500, seed=7)
    taken_again = register_record(spec(TRI), "embeddings", "json", False, None, 1.0)
    control = [(CONTROL_HEADER, b"1")]
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    try:  # one partition, in this order, all at once
        values = [(v, []) for v in records(stream.slice(0, 700))]
        values += [(unregister_record("tri"), control), (taken_again, control)]
        values += [(v, []) for v in records(stream.slice(700, 1500))]
        sent = [await p.send(topics.updates, v, headers=h) for v, h in values]
        await asyncio.gather(*sent)
    finally:
        await p.stop()
    await wait_all(svcs, len(stream) - 1)
    for svc in svcs:
        async with http_client(svc.base_url) as c:
            r = await c.get("/api/v1/queries/tri")
            held = (await c.get("/api/v1/status")).json()["queries"]
        assert r.status_code == 200, (svc.base_url, r.text)
        assert r.json()["from_seq"] == 700
        assert held == 1, "the deleted one left the catalog"
    want = {(s, q, m) for _, s, q, m in oracle_deltas(stream, [(TRI, 0)])}
    n = len(want)
    msgs = await consume_topic(broker.bootstrap, topics.matches, 1, 60,
                               enough=lambda m: len(rows(m)) >= n)  # fmt: skip
    got = [(r[3], r[2], r[4]) for _, r in rows(msgs) if r[0] == "tri"]
    assert any(q >= 700 for _, q, _ in got), "the query taken again matches"
    assert len(got) == len(set(got)) and set(got) == want, "every delta once, none more"
