"""Kafka in, websocket and Kafka out, through a real tansu broker and a real ``dcsm serve``.
Every expectation comes from the CPU engine run directly on the same updates."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import Counter

import numpy as np
import pytest
from aiokafka import AIOKafkaProducer
from helpers import (
    PATH,
    SQUARE,
    TRI,
    consume_topic,
    http_client,
    metric_value,
    oracle_counts,
    oracle_deltas,
    read_frames,
    sorted_deltas,
    spec,
    updates_json,
    wait_processed,
    ws_connect,
)

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import OP_INSERT, UpdateBatch
from dcsm.service.codec import encode_binary

pytestmark = pytest.mark.kafka


async def produce(bootstrap: str, topic: str, values: list[bytes]) -> None:
    p = AIOKafkaProducer(bootstrap_servers=bootstrap, max_request_size=16 * 1024 * 1024)
    await p.start()
    try:
        for v in values:
            await p.send(topic, v)
        await p.flush()
    finally:
        await p.stop()


def mixed_encodings(batch: UpdateBatch) -> list[bytes]:
    """Cycles through: single JSON objects, JSON arrays of 7, binary batches of 50."""
    rows = updates_json(batch)
    out: list[bytes] = []
    i = 0
    k = 0
    while i < len(rows):
        kind = k % 3
        if kind == 0:
            out.extend(json.dumps(r).encode() for r in rows[i : i + 5])
            i += 5
        elif kind == 1:
            out.append(json.dumps(rows[i : i + 7]).encode())
            i += 7
        else:
            out.append(encode_binary(batch.slice(i, min(i + 50, len(rows)))))
            i += 50
        k += 1
    return out


def topic_deltas(records: list) -> tuple[list, dict[str, dict[int, int]]]:
    deltas, counts = [], {}
    last_seq: dict[bytes, int] = {}
    for r in records:
        f = json.loads(r.value)
        assert r.key == f["query"].encode(), "records are keyed by query name"
        assert f["seq"] >= last_seq.get(r.key, -1), "per-query order on the topic"
        last_seq[r.key] = f["seq"]
        if f.get("type") == "count":
            c = counts.setdefault(f["query"], {})
            c[f["seq"]] = c.get(f["seq"], 0) + f["sign"] * f["count"]
        else:
            deltas.append((f["query"], f["sign"], f["seq"], tuple(f["match"])))
    return sorted(deltas), counts


async def test_kafka_to_websocket_and_matches_topic(broker, topics, make_service) -> None:
    batch = powerlaw_stream(120, 1500, num_labels=2, seed=31)
    expected = oracle_deltas(batch, [(TRI, 0), (PATH, 0)])
    exp_square = oracle_counts(batch, SQUARE)
    exp_tri = [d for d in expected if d[0] == "tri"]
    svc = make_service()
    async with http_client(svc.base_url) as c:
        assert (await c.get("/readyz")).json()["checks"]["kafka"] is True
        for p in (TRI, PATH):
            assert (await c.post("/api/v1/queries", json=spec(p))).status_code == 201
        r = await c.post("/api/v1/queries", json=spec(SQUARE) | {"mode": "count"})
        assert r.status_code == 201
        async with ws_connect(svc.ws_url("tri")) as ws:
            reader = asyncio.create_task(read_frames(ws, len(exp_tri), 60, stop_on_idle_s=0.5))
            await produce(broker.bootstrap, topics.updates, mixed_encodings(batch))
            frames = await reader
            await wait_processed(c, len(batch) - 1)
            status = (await c.get("/api/v1/status")).json()
    assert not [f for f in frames if "type" in f]  # no gap frames for a reading client
    assert sorted_deltas(frames) == exp_tri
    n_records = status["kafka"]["records"]
    records = await consume_topic(
        broker.bootstrap, topics.matches, len(expected) + len(exp_square), 30
    )
    deltas, counts = topic_deltas(records)
    assert deltas == expected
    assert counts == {"square": exp_square}
    assert status["next_seq"] == len(batch)
    assert n_records > 0 and status["kafka"]["lag"] == 0


async def test_bad_records_go_to_dead_letter_and_valid_ones_all_count(
    broker, topics, make_service
) -> None:
    batch = powerlaw_stream(60, 400, num_labels=2, seed=17)
    rows = updates_json(batch)
    u0, lab0 = int(batch.u[0]), int(batch.u_label[0])
    conflict = {"op": "insert", "u": u0, "v": 10**9, "u_label": lab0 + 1}
    bad_binary = bytearray(encode_binary(batch.slice(0, 3)))
    bad_binary[12 + 37 + 1 : 12 + 37 + 9] = bad_binary[12 + 37 + 9 : 12 + 37 + 17]  # self loop
    # (value, reasons it must produce, valid updates it carries)
    bad = [
        (b"\x00\xffnot json", ["malformed"], []),
        (b"[1, 2", ["malformed"], []),
        (b'"a string"', ["malformed"], []),
        (json.dumps({"op": "upsert", "u": 1, "v": 2}).encode(), ["unknown_op"], []),
        (json.dumps({"op": "insert", "u": 4, "v": 4}).encode(), ["self_loop"], []),
        (json.dumps({"op": "insert", "u": 4}).encode(), ["invalid"], []),
        (json.dumps([rows[0]] * 101).encode(), ["oversize"], []),
        (b"DCSB\x01\x00\x00\x00\x05\x00\x00\x00short", ["malformed"], []),
        (bytes(bad_binary), ["self_loop"], [0, 2]),
        (json.dumps([rows[1], {"op": "x"}, rows[2]]).encode(), ["unknown_op"], [1, 2]),
        (json.dumps(conflict).encode(), ["label_conflict"], ["conflict"]),
    ]
    # Interleave: valid single-update records, with one bad record after every 30.
    values: list[bytes] = []
    order: list = []  # the updates the engine sees, in order (for the oracle)
    it = iter(bad)
    for i, row in enumerate(rows):
        values.append(json.dumps(row).encode())
        order.append(i)
        if i % 30 == 29:
            b = next(it, None)
            if b is not None:
                values.append(b[0])
                order.extend(b[2])
    svc = make_service(env={"DCSM_MAX_RECORD_UPDATES": "100"})
    async with http_client(svc.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
        await produce(broker.bootstrap, topics.updates, values)
        await wait_processed(c, len(order) - 1, 60)
        stats = (await c.get("/api/v1/queries/tri")).json()["stats"]
        metrics = (await c.get("/metrics")).text
        assert (await c.get("/readyz")).status_code == 200
    # Oracle over exactly the updates that reached the engine (the conflict included: the
    # engine rejects it but it holds a seq).
    cols = {f: [] for f in ("op", "u", "v", "label", "u_label", "v_label")}
    for x in order:
        r = conflict if x == "conflict" else rows[x]
        cols["op"].append(OP_INSERT if r["op"] == "insert" else -1)
        cols["u"].append(r["u"])
        cols["v"].append(r["v"])
        cols["label"].append(r.get("label", 0))
        cols["u_label"].append(r.get("u_label", -1))
        cols["v_label"].append(r.get("v_label", -1))
    seen = UpdateBatch.from_arrays(
        np.array(cols["op"]), np.array(cols["u"]), np.array(cols["v"]), np.array(cols["label"]),
        u_label=np.array(cols["u_label"]), v_label=np.array(cols["v_label"]),
    )  # fmt: skip
    expected = oracle_deltas(seen, [(TRI, 0)])
    records = await consume_topic(broker.bootstrap, topics.matches, len(expected), 30)
    assert topic_deltas(records)[0] == expected
    plus = sum(1 for d in expected if d[1] == 1)
    assert stats["deltas"] == {"+": plus, "-": len(expected) - plus}
    assert stats["updates_seen"] == len(order)
    want = Counter((reason, value) for value, reasons, _ in bad for reason in reasons)
    letters = await consume_topic(broker.bootstrap, topics.dead_letter, sum(want.values()), 30)
    got = Counter((dict(r.headers)["reason"].decode(), r.value) for r in letters)
    assert got == want
    for r in letters:
        h = dict(r.headers)
        assert h["error"] and h["source"].decode().startswith(topics.updates + "/0@")
    for reason, n in Counter(r for r, _ in want.elements()).items():
        assert metric_value(metrics, "dcsm_dead_letters_total", reason=reason) == n


async def test_http_and_kafka_share_one_sequence(broker, topics, make_service) -> None:
    batch = powerlaw_stream(80, 1200, num_labels=1, seed=41)
    via_kafka, via_http = batch.slice(0, 600), batch.slice(600, 1200)
    svc = make_service()
    async with http_client(svc.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
        rows = updates_json(via_http)

        async def post() -> list[tuple[int, int, int]]:
            spans = []  # (first seq given, first row, rows)
            for i in range(0, len(rows), 20):
                r = await c.post("/api/v1/updates", json=rows[i : i + 20])
                spans.append((r.json()["first_seq"], i, len(rows[i : i + 20])))
            return spans

        values = [json.dumps(r).encode() for r in updates_json(via_kafka)]
        spans, _ = await asyncio.gather(post(), produce(broker.bootstrap, topics.updates, values))
        await wait_processed(c, len(batch) - 1)
    # Rebuild the engine order: HTTP requests hold the seqs they were given, Kafka updates
    # (in topic order) fill the rest.
    slots: list[int | None] = [None] * len(batch)
    for first, row, n in spans:
        for j in range(n):
            slots[first + j] = 600 + row + j
    kafka_rows = iter(range(len(via_kafka)))
    perm = [next(kafka_rows) if x is None else x for x in slots]
    assert sorted(perm) == list(range(len(batch)))
    idx = np.array(perm)
    merged = dataclasses.replace(
        batch,
        **{f: getattr(batch, f)[idx] for f in ("op", "u", "v", "label", "u_label", "v_label")},
    )
    expected = oracle_deltas(merged, [(TRI, 0)])
    records = await consume_topic(broker.bootstrap, topics.matches, len(expected), 30)
    assert topic_deltas(records)[0] == expected


async def test_malformed_control_records_are_dead_letters(broker, topics, make_service) -> None:
    """Records with the control header that this service never writes (not JSON, an unknown
    op, a registration with a bad field or an invalid spec, a deletion without a name) go to
    the dead letters (reason malformed_control) and change nothing; a well-formed one
    between them registers its query, and the stream flows on."""
    from dcsm.service.replicas import CONTROL_HEADER, register_record

    good = register_record(spec(TRI), "count", "json", False, None, 1.0)
    bad = [
        b"\x00not json",
        json.dumps({"op": "drop", "name": "tri"}).encode(),
        json.dumps({"op": "unregister"}).encode(),
        register_record(spec(TRI), "bogus", "json", False, None, 1.0),
        register_record(spec(TRI), "count", "json", "yes", None, 1.0),  # type: ignore[arg-type]
        register_record(
            {"name": "x", "vertices": [], "edges": []}, "count", "json", False, None, 1.0
        ),  # fmt: skip
    ]
    stream = powerlaw_stream(60, 400, seed=5)
    svc = make_service()
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap)
    await p.start()
    try:
        control = [(CONTROL_HEADER, b"1")]
        sent = [await p.send(topics.updates, v, headers=control) for v in [*bad[:3], good]]
        sent += [await p.send(topics.updates, v, headers=control) for v in bad[3:]]
        sent.append(await p.send(topics.updates, encode_binary(stream)))
        await asyncio.gather(*sent)
    finally:
        await p.stop()
    async with http_client(svc.base_url) as c:
        await wait_processed(c, len(stream) - 1, 60)
        listed = [q["name"] for q in (await c.get("/api/v1/queries")).json()["items"]]
        metrics = (await c.get("/metrics")).text
        assert (await c.get("/readyz")).status_code == 200
    assert listed == ["tri"]
    letters = await consume_topic(broker.bootstrap, topics.dead_letter, len(bad), 30)
    assert sorted(r.value for r in letters) == sorted(bad)
    for r in letters:
        h = dict(r.headers)
        assert h["reason"] == b"malformed_control" and b"malformed control record" in h["error"]
    assert metric_value(metrics, "dcsm_dead_letters_total", reason="malformed_control") == 6
