"""Idempotent HTTP ingest through Kafka: the key travels in a ``dcsm-idempotency-key`` record
header; retries get the first answer across a SIGKILL restart, and a key left unresolved by a
crash is resolved by the replay (its record is in the topic) or forgotten once the ingest has
read the whole topic (it is not)."""

from __future__ import annotations

import asyncio
import json

import pytest
from helpers import http_client

from dcsm.service.durable import RecordLog
from dcsm.service.idempotency import RECORD_HEADER, request_hash

pytestmark = pytest.mark.kafka

ROWS = [{"op": "insert", "u": 1, "v": 2}, {"op": "insert", "u": 2, "v": 3}]
BODY = json.dumps(ROWS).encode()
JSON = {"content-type": "application/json"}


async def post(c, k: str):
    return await c.post("/api/v1/updates", content=BODY, headers=JSON | {"Idempotency-Key": k})


async def test_retries_across_a_crash(broker, topics, make_service, tmp_path) -> None:
    from aiokafka import AIOKafkaProducer

    state = tmp_path / "state"
    first = make_service(state_dir=state)
    async with http_client(first.base_url) as c:
        r1 = await post(c, "k1")
        assert r1.status_code == 200 and r1.json()["durable"]["topic"] == topics.updates
        again = await post(c, "k1")
        assert again.json() == r1.json() and again.headers["idempotent-replayed"] == "true"
    first.kill()

    # What a crash leaves: "late" noted and its record in the topic, no answer recorded;
    # "lost" noted, its record never produced.
    log = RecordLog(state / "idempotency.log")
    for k in ("late", "lost"):
        entry = {"op": "begin", "key": k, "hash": request_hash(BODY, True), "at": 4e9,
                 "wait": True, "log": None}  # fmt: skip
        log.append(json.dumps(entry).encode())
    log.close()
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await producer.start()
    try:
        await producer.send_and_wait(topics.updates, BODY, headers=[(RECORD_HEADER, b"late")])
    finally:
        await producer.stop()

    second = make_service(state_dir=state)
    async with http_client(second.base_url) as c:
        again = await post(c, "k1")
        assert again.status_code == 200 and again.json() == r1.json()
        for _ in range(200):
            r = await post(c, "late")
            if r.status_code != 409:
                break
            await asyncio.sleep(0.05)
        assert r.status_code == 200, r.text
        assert r.json()["first_seq"] == 2 and r.json()["outcomes"] == {"noop": 2}
        for _ in range(200):
            r = await post(c, "lost")
            if r.status_code != 409:
                break
            await asyncio.sleep(0.05)
        assert r.status_code == 200 and "idempotent-replayed" not in r.headers
        assert r.json()["first_seq"] == 4
        status = (await c.get("/api/v1/status")).json()
        assert status["next_seq"] == 6  # k1 once, late once (by the replay), lost once
