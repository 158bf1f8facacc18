"""SIGTERM mid-stream and restart: the union of both runs' output equals, exactly (no loss,
no duplicate), what the CPU engine produces for the whole stream in one go."""

from __future__ import annotations

import asyncio
import json
import time

import numpy as np
import pytest
from helpers import (
    PATH,
    SQUARE,
    TRI,
    consume_topic,
    http_client,
    oracle_counts,
    oracle_deltas,
    spec,
    updates_json,
    wait_processed,
)

from dcsm.loadgen.producer import produce_paced
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.checkpoint import Checkpoint

pytestmark = pytest.mark.kafka


def paced(n: int, seconds: float) -> np.ndarray:
    """Send times of n records spread evenly over the next ``seconds``."""
    return time.time() + np.arange(n) * (seconds / n)


async def test_sigterm_and_restart_mid_stream_is_exact(broker, topics, make_service) -> None:
    batch = powerlaw_stream(200, 4000, num_labels=2, seed=13)
    values = [json.dumps(r).encode() for r in updates_json(batch)]
    expected = oracle_deltas(batch, [(TRI, 0), (PATH, 0)])
    exp_square = oracle_counts(batch, SQUARE)

    first = make_service()
    async with http_client(first.base_url) as c:
        for p in (TRI, PATH):
            assert (await c.post("/api/v1/queries", json=spec(p))).status_code == 201
        body = spec(SQUARE, mode="count")
        assert (await c.post("/api/v1/queries", json=body)).status_code == 201
        head = values[:1500]
        await produce_paced(broker.bootstrap, topics.updates, head, paced(len(head), 0.5))
        await wait_processed(c, 1499)
        # The rest trickles in over 3 s; stop the service about a second into it.
        tail = values[1500:]
        producer = asyncio.create_task(
            produce_paced(broker.bootstrap, topics.updates, tail, paced(len(tail), 3.0))
        )
        await asyncio.sleep(1.0)
        assert first.terminate() == 0, first.log()
    snap = Checkpoint.latest(first.state_dir)
    assert snap is not None
    assert 1500 < snap.next_seq < len(batch), "the stop must fall mid-stream"
    # One update per record: the input position the checkpoint covers is its next seq.
    assert snap.positions[f"kafka:{topics.updates}"] == {0: snap.next_seq}
    assert sorted(q["name"] for q in snap.queries) == ["path", "square", "tri"]

    second = make_service(state_dir=first.state_dir)
    async with http_client(second.base_url) as c:
        names = [q["name"] for q in (await c.get("/api/v1/queries")).json()["items"]]
        assert names == ["path", "square", "tri"]
        await producer
        await wait_processed(c, len(batch) - 1, 60)
        tri_stats = (await c.get("/api/v1/queries/tri")).json()["stats"]

    records = await consume_topic(
        broker.bootstrap, topics.matches, len(expected) + len(exp_square), 30
    )
    deltas, counts = [], {}
    for r in records:
        f = json.loads(r.value)
        if f.get("type") == "count":
            counts[f["seq"]] = counts.get(f["seq"], 0) + f["sign"] * f["count"]
        else:
            deltas.append((f["query"], f["sign"], f["seq"], tuple(f["match"])))
    assert len(deltas) == len(expected), "no delta lost or repeated across the restart"
    assert sorted(deltas) == expected
    assert counts == exp_square
    # Stats survive the restart too.
    tri = [d for d in expected if d[0] == "tri"]
    assert tri_stats["deltas"]["+"] == sum(1 for d in tri if d[1] == 1)
    assert tri_stats["updates_seen"] == len(batch)
    # And the graph the second run ends with is the one the stream builds.
    assert second.terminate() == 0, second.log()
    final = Checkpoint.latest(second.state_dir)
    assert final is not None and final.next_seq == len(batch)
    g = final.graph
    live = set()
    for op, u, v in zip(batch.op.tolist(), batch.u.tolist(), batch.v.tolist(), strict=True):
        e = (min(u, v), max(u, v))
        (live.add if op == 1 else live.discard)(e)
    got = set(
        zip(np.minimum(g.src, g.dst).tolist(), np.maximum(g.src, g.dst).tolist(), strict=True)
    )
    assert got == live
