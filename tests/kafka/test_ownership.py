"""One owner of the input (issue 15, item 2) and a recreated input topic (item 5): a second
service on the same input refuses to start and nothing is published twice; the owner killed
with kill -9 is replaced once its lease times out; a multi-partition input topic is refused;
a broker that comes back empty is noticed, reported and handled by --on-offset-reset."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import TRI, consume_topic, http_client, spec, wait_processed
from test_recovery import FAST, produce, records

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.app import ensure_topics
from dcsm.service.broker import TansuBroker
from dcsm.service.ownership import HELD_LINE, _pid_namespace

pytestmark = pytest.mark.kafka

LEASE = ("--input-lease-session-ms", "2000")


def frame_ids(msgs: list) -> list[str]:
    out = []
    for m in msgs:
        body = json.loads(m.value)
        for frame in body if isinstance(body, list) else [body]:
            if "match" in frame:
                out.append(str(frame["id"]))
    return out


async def test_a_second_service_on_the_same_input_refuses(broker, topics, make_service) -> None:
    stream = powerlaw_stream(200, 1500, seed=5)
    owner = make_service(*FAST, *LEASE)
    async with http_client(owner.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
    with pytest.raises(RuntimeError) as err:
        make_service(*LEASE)
    message = str(err.value)
    assert "exited with 1" in message
    assert f"{topics.updates} is already consumed by another dcsm service" in message
    assert f"pid {owner.pid}" in message
    async with http_client(owner.base_url) as c:
        await produce(broker.bootstrap, topics.updates, records(stream))
        await wait_processed(c, len(stream) - 1)
        stats = (await c.get("/api/v1/queries/tri")).json()["stats"]
    published = frame_ids(await consume_topic(broker.bootstrap, topics.matches, 1, 30))
    assert len(published) == stats["deltas"]["+"] + stats["deltas"]["-"] > 0
    assert len(set(published)) == len(published), "every delta is published once"
    # kill -9: the lease outlives the owner for its session; the restart waits, then owns.
    owner.kill()
    again = make_service(*FAST, *LEASE, state_dir=owner.state_dir)
    assert "input lease on" in again.log(1 << 20)
    async with http_client(again.base_url) as c:
        assert (await c.get("/readyz")).status_code == 200
        await wait_processed(c, len(stream) - 1)


@pytest.mark.skipif(not _pid_namespace(), reason="/proc names no boot id or pid namespace here")
async def test_a_restart_after_kill_9_skips_the_lease_wait(broker, topics, make_service) -> None:
    """The killed owner's member id is in its state directory: the restart on it removes that
    member from the lease group before joining, instead of waiting for its session to end
    (tansu: ~18 s at the default 10 s session, one join now); a start after a clean stop
    does not wait either."""
    owner = make_service(*FAST)
    member = json.loads((owner.state_dir / "lease-member.json").read_text())
    assert member["pid"] == owner.pid and member["member"]
    owner.kill()
    again = make_service(*FAST, state_dir=owner.state_dir)
    log = again.log(1 << 20)
    assert f"removed the member of the exited service (pid {owner.pid})" in log, log
    assert lease_held_after(log) < 9.0, log
    async with http_client(again.base_url) as c:
        assert (await c.get("/readyz")).status_code == 200
    assert again.terminate() == 0, again.log()
    third = make_service(*FAST, state_dir=owner.state_dir)
    assert lease_held_after(third.log(1 << 20)) < 9.0, third.log(1 << 20)


def lease_held_after(log: str) -> float:
    """Seconds the last start of the service waited for the input lease (its log line)."""
    held = HELD_LINE.findall(log)
    return float(held[-1]) if held else float("inf")


async def test_a_multi_partition_input_topic_is_refused(broker, topics, make_service) -> None:
    await ensure_topics(broker.bootstrap, [topics.updates], partitions=3)
    with pytest.raises(RuntimeError) as err:
        make_service()
    assert f"input topic {topics.updates} has 3 partitions" in str(err.value)


@pytest.mark.parametrize("policy", ["stop", "earliest"])
async def test_a_broker_back_empty_is_noticed(policy, topics, tmp_path) -> None:
    stream = powerlaw_stream(200, 3300, seed=9)
    head, tail = stream.slice(0, 3000), stream.slice(3000, 3300)
    broker = TansuBroker().start()
    svc = ServiceProcess(
        *topics.flags(), "--kafka-acks", "1", *FAST, *LEASE, "--on-offset-reset", policy,
        kafka=broker.bootstrap, workdir=tmp_path,
    )  # fmt: skip
    try:
        svc.start()
        async with http_client(svc.base_url) as c:
            await produce(broker.bootstrap, topics.updates, records(head))  # offsets 0-29
            await wait_processed(c, len(head) - 1)
            await asyncio.sleep(0.6)  # a checkpoint commits offset 30
            broker.stop()
            broker = TansuBroker(port=broker.port).start()  # memory storage: empty
            await ensure_topics(
                broker.bootstrap, [topics.updates, topics.matches, topics.dead_letter]
            )
            await produce(broker.bootstrap, topics.updates, records(tail))  # offsets 0-2
            if policy == "earliest":
                await wait_processed(c, len(stream) - 1)
                assert (await c.get("/readyz")).status_code == 200
            else:
                for _ in range(100):
                    r = await c.get("/readyz")
                    if r.status_code == 503 and "error" in r.json():
                        break
                    await asyncio.sleep(0.2)
                assert r.status_code == 503
                assert "position 30 is no longer in the topic" in r.json()["error"]
                assert "--on-offset-reset earliest" in r.json()["error"]
                status = (await c.get("/api/v1/status")).json()
                assert status["next_seq"] == len(head), "nothing after the reset was read"
                post = await c.post("/api/v1/updates", json=[{"op": "insert", "u": 1, "v": 2}])
                assert post.status_code == 503
        assert "position 30 is no longer in the topic" in svc.log(1 << 20)
    finally:
        svc.kill()
        broker.stop()
