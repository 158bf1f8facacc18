"""The Kafka output (service/outputs.py) against a real tansu broker: frames of many queries
handed over at once go out as one record batch a partition, not one a query (each batch
waits for the partition's batch in flight: a round of the pump costs one broker round trip
a partition), every frame exactly once, each query's in order, its id in the header."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from helpers import consume_topic

from dcsm.service.app import ensure_topics
from dcsm.service.outputs import KafkaOutput

pytestmark = pytest.mark.kafka


@pytest.mark.parametrize("partitions", [1, 3])
async def test_many_queries_go_out_in_one_batch_a_partition(broker, topics, partitions):
    await ensure_topics(broker.bootstrap, [topics.matches], partitions)
    out = KafkaOutput(broker.bootstrap, topics.matches, topics.dead_letter, acks="1")
    await out.start()
    batches: list[int] = []  # the partition of each batch handed to the producer
    send_batch = out._producer.send_batch

    async def counted(batch, topic, *, partition):
        batches.append(partition)
        return await send_batch(batch, topic, partition=partition)

    out._producer.send_batch = counted
    sent: dict[str, list[str]] = defaultdict(list)
    try:
        for rnd in range(5):
            for q in range(40):  # 40 queries, 10 frames each a round
                name = f"q{q}"
                ids = [f"{q:04d}{rnd:04d}{j:08d}" for j in range(10)]
                frames = [json.dumps({"query": name, "id": i}) for i in ids]
                await out.send_frames(name, frames, ids)
                sent[name] += ids
            await out.flush()
        assert (out.failures, out.buffered) == (0, 0)
    finally:
        await out.stop()
    msgs = await consume_topic(broker.bootstrap, topics.matches, 2000, 30)
    got: dict[str, list[str]] = defaultdict(list)
    parts: dict[str, set[int]] = defaultdict(set)
    for m in msgs:
        body = json.loads(m.value)
        assert m.key.decode() == body["query"]
        assert dict(m.headers)["id"].decode() == body["id"]
        got[body["query"]].append(body["id"])
        parts[body["query"]].add(m.partition)
    assert got == sent, "every frame once, each query's in order"
    assert all(len(p) == 1 for p in parts.values()), "a query keeps its partition"
    used = {p for ps in parts.values() for p in ps}
    assert len(used) == min(partitions, 40)
    # 5 rounds of 40 queries: a batch a partition a round at most (a batch a query: 200).
    assert set(batches) == used and len(batches) <= 5 * len(used), batches


async def test_a_batch_the_producer_refuses_is_counted_lost_and_no_more(broker, topics):
    """The producer refuses one partition's batch (as aiokafka does when a partition's queue
    stays full past the request timeout): exactly that batch's frames count as lost, the
    buffer empties, ``flush`` raises, and the other partition's frames arrive."""
    from aiokafka.errors import KafkaTimeoutError

    from dcsm.service.outputs import OutputLost

    await ensure_topics(broker.bootstrap, [topics.matches], 2)
    out = KafkaOutput(
        broker.bootstrap, topics.matches, topics.dead_letter, acks="1", request_timeout_ms=500
    )
    await out.start()
    send_batch = out._producer.send_batch
    refused: list[int] = []

    async def refuse_partition_1(batch, topic, *, partition):
        if partition == 1:
            refused.append(batch.record_count())
            raise KafkaTimeoutError()
        return await send_batch(batch, topic, partition=partition)

    out._producer.send_batch = refuse_partition_1
    names = [f"q{q}" for q in range(8)]
    try:
        for name in names:
            await out.send_frames(name, [json.dumps({"query": name, "id": str(j)}) for j in
                                         range(25)], [str(j) for j in range(25)])  # fmt: skip
        with pytest.raises(OutputLost, match="record"):
            await out.flush()
        assert out.lost.is_set() and out.buffered == 0
    finally:
        await out.stop()
    msgs = await consume_topic(broker.bootstrap, topics.matches, 1, 30)
    on_0 = {json.loads(m.value)["query"] for m in msgs}
    # Asked again until the request timeout, then counted once.
    assert len(refused) > 1 and out.failures == refused[0] == 25 * (len(names) - len(on_0))
    assert len(msgs) == 25 * len(on_0) and {m.partition for m in msgs} == {0}


async def test_the_wait_for_room_is_asked_again_until_the_request_timeout(broker, topics):
    """aiokafka's wait for room on a partition gives up early under broker retries (it
    counts its time more than once) and queues nothing: the output asks again, and every
    frame arrives once, none counted lost."""
    from aiokafka.errors import KafkaTimeoutError

    out = KafkaOutput(broker.bootstrap, topics.matches, topics.dead_letter, acks="1")
    await out.start()
    send_batch = out._producer.send_batch
    calls = 0

    async def early_twice(batch, topic, *, partition):
        nonlocal calls
        calls += 1
        if calls <= 2:
            raise KafkaTimeoutError()
        return await send_batch(batch, topic, partition=partition)

    out._producer.send_batch = early_twice
    try:
        await out.send_frames("q", [json.dumps({"id": str(j)}) for j in range(10)],
                              [str(j) for j in range(10)])  # fmt: skip
        await out.flush()
        assert (out.failures, calls) == (0, 3)
    finally:
        await out.stop()
    msgs = await consume_topic(broker.bootstrap, topics.matches, 10, 30)
    assert [json.loads(m.value)["id"] for m in msgs] == [str(j) for j in range(10)]
