"""Bad input, counted: over ten thousand malformed records interleaved with good ones,
through a real tansu broker and a real ``dcsm serve``. Every bad record must come back on
the dead-letter topic with its reason, every good update must be applied (the final graph,
seen through a backfilled query, equals the CPU engine's over the good updates only), and the
service must still be alive."""

from __future__ import annotations

import json
import time
from collections import Counter

import numpy as np
import pytest
from aiokafka import AIOKafkaProducer
from helpers import (
    TRI,
    consume_topic,
    http_client,
    metric_value,
    oracle_deltas,
    spec,
    updates_json,
    wait_processed,
)

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import UpdateBatch
from dcsm.service.codec import HEADER, MAGIC, RECORD_DTYPE, decode_record, encode_binary

pytestmark = pytest.mark.kafka

MAX_UPDATES = 100
N_BAD = 10_000


def bad_record(rng: np.random.Generator, good: UpdateBatch) -> bytes:
    """One malformed record of a random kind; each kind is rejected whole, with one reason."""
    kind = int(rng.integers(0, 9))
    if kind == 0:  # random bytes (a leading byte no JSON text and no binary batch starts with)
        return bytes([int(rng.integers(0x80, 0x100))]) + rng.bytes(int(rng.integers(0, 200)))
    if kind == 1:  # truncated binary batch
        n = int(rng.integers(1, 20))
        full = encode_binary(good.slice(0, n))
        return full[: int(rng.integers(4, len(full)))]
    if kind == 2:  # oversized binary batch: a count above the limit (with or without its bytes)
        count = int(rng.integers(MAX_UPDATES + 1, 2**32))
        return HEADER.pack(MAGIC, 1, count) + rng.bytes(int(rng.integers(0, 3)) * 37)
    if kind == 3:  # binary batch with a negative id or a bad op
        rec = np.zeros(1, RECORD_DTYPE)
        rec["op"], rec["u"], rec["v"] = 1, -int(rng.integers(1, 2**62)), 5
        if rng.random() < 0.5:
            rec["u"], rec["op"] = 4, int(rng.choice([0, 2, 7, -3]))
        return HEADER.pack(MAGIC, 1, 1) + rec.tobytes()
    row = {"op": "insert", "u": int(rng.integers(0, 50)), "v": int(rng.integers(50, 100))}
    if kind == 4:  # wrong JSON types
        field = str(rng.choice(["op", "u", "v", "label", "ts"]))
        wrong = [[1], "x", {"a": 1}, True, "1e999", "7"] + ([] if field == "ts" else [1.5, 2.0])
        row[field] = wrong[int(rng.integers(0, len(wrong)))]
        if field == "op" and isinstance(row[field], str):
            row[field] = "upsert"
    elif kind == 5:  # huge ids
        row[str(rng.choice(["u", "v"]))] = 2**63 + int(rng.integers(0, 2**40))
    elif kind == 6:  # unknown fields
        row[f"x{int(rng.integers(0, 1000))}"] = 1
    elif kind == 7:  # not an object or array, or broken JSON text
        texts = ["null", "42", '"edge"', "true", '{"op": "insert", "u": 1,', "[{}", "{]"]
        return texts[int(rng.integers(0, len(texts)))].encode()
    else:  # self loop
        row["v"] = row["u"]
    return json.dumps(row).encode()


def good_records(batch: UpdateBatch) -> list[bytes]:
    """The good updates in order: single JSON objects, JSON arrays, binary batches."""
    rows = updates_json(batch)
    out: list[bytes] = []
    i = 0
    while i < len(rows):
        kind = len(out) % 3
        n = (1, 4, 9)[kind]
        if kind == 0:
            out.append(json.dumps(rows[i]).encode())
        elif kind == 1:
            out.append(json.dumps(rows[i : i + n]).encode())
        else:
            out.append(encode_binary(batch.slice(i, min(i + n, len(rows)))))
        i += n
    return out


async def test_fuzzed_records_are_all_dead_lettered_and_good_ones_all_applied(
    broker, topics, make_service
) -> None:
    rng = np.random.default_rng(1515)
    good = powerlaw_stream(150, 4000, num_labels=1, seed=15)
    good_values = good_records(good)
    bad_values = [bad_record(rng, good) for _ in range(N_BAD)]
    for v in bad_values:  # the premise: each is one whole-record rejection
        d = decode_record(v, MAX_UPDATES)
        assert len(d) == 0 and len(d.errors) == 1, (v[:80], d.errors)
    # Interleave at random, good records keeping their order.
    is_bad = np.zeros(len(good_values) + N_BAD, bool)
    is_bad[rng.choice(len(is_bad), N_BAD, replace=False)] = True
    gi, bi = iter(good_values), iter(bad_values)
    values = [next(bi) if b else next(gi) for b in is_bad.tolist()]

    svc = make_service(env={"DCSM_MAX_RECORD_UPDATES": str(MAX_UPDATES)})
    t0 = time.monotonic()
    p = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=50,
                         max_batch_size=1024 * 1024)  # fmt: skip
    await p.start()
    try:
        for v in values:
            await p.send(topics.updates, v)
        await p.flush()
    finally:
        await p.stop()
    async with http_client(svc.base_url) as c:
        await wait_processed(c, len(good) - 1, 90)
        status = (await c.get("/api/v1/status")).json()
        r = await c.post("/api/v1/queries", json=spec(TRI), params={"backfill": "true"})
        assert r.status_code == 201, r.text
        backfill = r.json()["backfill"]
        metrics = (await c.get("/metrics")).text
        assert (await c.get("/readyz")).status_code == 200
    letters = await consume_topic(broker.bootstrap, topics.dead_letter, N_BAD, 90, idle_s=2)
    elapsed = time.monotonic() - t0
    alive = svc.proc is not None and svc.proc.poll() is None
    counts = (
        f"sent {len(values)} records ({len(good_values)} good carrying {len(good)} updates, "
        f"{N_BAD} bad); dead-lettered {len(letters)}; applied {status['next_seq']} updates; "
        f"crashes {0 if alive else 1}; {elapsed:.1f} s"
    )
    print(counts)
    assert alive, counts
    assert status["next_seq"] == len(good), counts  # no bad update took a seq
    assert len(letters) == N_BAD, counts
    assert Counter(r.value for r in letters) == Counter(bad_values), counts
    reasons = Counter(dict(r.headers)["reason"].decode() for r in letters)
    assert set(reasons) <= {"malformed", "oversize", "invalid", "unknown_op", "self_loop"}, reasons
    for r in letters:
        assert dict(r.headers)["error"], r.value[:80]
    for reason, n in reasons.items():
        assert metric_value(metrics, "dcsm_dead_letters_total", reason=reason) == n
    # The final graph: the matches a backfilled query finds in it are the CPU engine's live
    # matches over the good updates only.
    deltas = oracle_deltas(good, [(TRI, 0)])
    assert backfill == sum(d[1] for d in deltas) > 0, (backfill, counts)
