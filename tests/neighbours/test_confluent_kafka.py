"""confluent-kafka (the Python binding of librdkafka) as the producer of ``dcsm.updates`` and
the consumer of ``dcsm.matches``: JSON records and binary batches in, match records (key,
``id`` header, value) out, checked against the CPU engine oracle."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from neighbours_common import (
    Record,
    Workload,
    need_module,
    read_until,
    register_queries,
    wait_processed,
)

pytestmark = pytest.mark.kafka


def produce(ck: Any, bootstrap: str, topic: str, values: list[bytes]) -> None:
    errors: list[Any] = []
    p = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": False})
    for v in values:
        p.produce(topic, v, on_delivery=lambda err, msg: errors.append(err) if err else None)
        p.poll(0)
    assert p.flush(30) == 0, "records left undelivered"
    assert not errors, errors


def consume_all(ck: Any, bootstrap: str, topic: str) -> list[Record]:
    """The whole topic from the beginning: every partition assigned at its first offset,
    read until librdkafka reports the end of each."""
    c = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"neighbour-{uuid.uuid4().hex[:8]}",  # required; nothing committed
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    out: list[Record] = []
    try:
        meta = c.list_topics(topic, timeout=10).topics[topic]
        assert meta.error is None, meta.error
        parts = sorted(meta.partitions)
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in parts])
        done: set[int] = set()
        while len(done) < len(parts):
            msg = c.poll(10.0)
            assert msg is not None, f"no end of partition reported for {topic} in 10 s"
            if msg.error():
                assert msg.error().code() == ck.KafkaError._PARTITION_EOF, msg.error()
                done.add(msg.partition())
                continue
            headers = {k: bytes(v) for k, v in (msg.headers() or [])}
            out.append(Record(msg.key(), headers, msg.value()))
    finally:
        c.close()
    return out


def test_confluent_kafka_produces_and_reads_matches(broker, topics, make_service) -> None:
    ck = need_module("confluent_kafka")
    w = Workload.make(seed=43)
    svc = make_service()
    register_queries(svc.base_url)
    produce(ck, broker.bootstrap, topics.updates, w.records)

    status = wait_processed(svc.base_url, len(w.batch) - 1)
    assert status["next_seq"] == len(w.batch)

    expected, exp_counts = w.expected()
    seen = read_until(
        lambda: consume_all(ck, broker.bootstrap, topics.matches), len(expected), len(exp_counts)
    )
    assert seen.deltas == expected
    assert seen.counts == exp_counts
    assert seen.frames["tri"] == len(expected) // 2
    assert seen.frames["trib"] < seen.frames["tri"]
