"""Idempotent HTTP ingest (service/idempotency.py): a retry with the same Idempotency-Key
gets the first answer and applies nothing, concurrently, after SIGTERM and after SIGKILL
restarts, and in the crash window between the durable updates and the recorded answer."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import http_client

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.model import OP_INSERT, UpdateBatch
from dcsm.service.codec import encode_binary
from dcsm.service.durable import RecordLog
from dcsm.service.idempotency import IdempotencyStore, KeyInProgress, KeyReused, request_hash

ROWS = [
    {"op": "insert", "u": 1, "v": 2},
    {"op": "insert", "u": 2, "v": 3},
    {"op": "insert", "u": 1, "v": 3, "u_label": 5},  # vertex 1 has label 0: "rejected"
]


def key(k: str) -> dict[str, str]:
    return {"Idempotency-Key": k}


async def next_seq(c) -> int:
    return (await c.get("/api/v1/status")).json()["next_seq"]


# -- the store ----------------------------------------------------------------------------


async def test_store_keeps_answers_for_the_window_and_compacts(tmp_path: Path) -> None:
    now = [1000.0]
    path = tmp_path / "idempotency.log"
    store = IdempotencyStore(path, 60.0, lambda: now[0])
    h = request_hash(b"[]", True)
    assert await store.lookup("a", h) is None
    store.reserve("a", h, True)
    await store.begin("a", 0)
    waiter = asyncio.create_task(store.lookup("a", h))  # a concurrent retry waits
    await asyncio.sleep(0)
    await store.complete("a", 200, {"accepted": 1})
    assert await waiter == (200, {"accepted": 1})
    with pytest.raises(KeyReused):
        await store.lookup("a", request_hash(b"[]", False))  # same body, other wait
    store.reserve("b", h, True)
    store.release("b", RuntimeError("refused before anything was durable"))
    assert await store.lookup("b", h) is None
    store.reserve("c", h, True)
    await store.begin("c", 1)  # then a crash: no answer
    store.reserve("d", h, True)
    await store.begin("d", 2)
    store.close()

    now[0] += 30
    again = IdempotencyStore(path, 60.0, lambda: now[0])
    assert await again.lookup("a", h) == (200, {"accepted": 1})
    with pytest.raises(KeyInProgress):  # unresolved: its updates may be in the log
        await again.lookup("c", h)
    assert again.key_of_log_entry(1) == "c" and again.key_of_log_entry(2) == "d"
    assert await again.drop_unresolved(log_length=2) == 1  # entry 2 never made it: "d"
    assert await again.lookup("d", h) is None
    await again.complete("c", 200, {"accepted": 2}, settled=True)  # the replay settles it
    assert await again.lookup("c", h) == (200, {"accepted": 2})
    again.close()

    now[0] += 31  # "a" and "c" are past the window: forgotten, and the log rewritten
    third = IdempotencyStore(path, 60.0, lambda: now[0])
    assert await third.lookup("a", h) is None and await third.lookup("c", h) is None
    third.close()
    assert len(RecordLog(path)) == 0


# -- a real service (no Kafka: the update log) -----------------------------------------------


async def test_retry_gets_the_first_answer_and_applies_nothing(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        first = await c.post("/api/v1/updates", json=ROWS, headers=key("k1"))
        assert first.status_code == 200, first.text
        assert first.json()["rejected"] == [{"index": 2, "seq": 2, "reason": "label_conflict"}]
        assert "idempotent-replayed" not in first.headers
        again = await c.post("/api/v1/updates", json=ROWS, headers=key("k1"))
        assert again.status_code == 200 and again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
        assert await next_seq(c) == 3

        r = await c.post("/api/v1/updates", json=ROWS[:1], headers=key("k1"))
        assert r.status_code == 422 and r.json()["error"]["code"] == "idempotency_key_reused"
        r = await c.post("/api/v1/updates", json=ROWS, headers=key("k1"), params={"wait": "false"})
        assert r.status_code == 422
        r = await c.post("/api/v1/updates", json=ROWS, headers=key("bad key"))
        assert r.status_code == 400 and r.json()["error"]["details"][0]["field"] == (
            "Idempotency-Key"
        )

        # wait=false: the first answer is the 202
        rows = [{"op": "insert", "u": 5, "v": 6}]
        r1 = await c.post("/api/v1/updates", json=rows, headers=key("k2"), params={"wait": "false"})
        r2 = await c.post("/api/v1/updates", json=rows, headers=key("k2"), params={"wait": "false"})
        assert r1.status_code == r2.status_code == 202 and r1.json() == r2.json()

        # concurrent retries: one application, one answer
        rows = [{"op": "insert", "u": 7, "v": 8}, {"op": "insert", "u": 8, "v": 9}]
        replies = await asyncio.gather(
            *(c.post("/api/v1/updates", json=rows, headers=key("k3")) for _ in range(5))
        )
        assert {r.status_code for r in replies} == {200}
        assert len({json.dumps(r.json(), sort_keys=True) for r in replies}) == 1
        assert await next_seq(c) == 3 + 1 + 2


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
async def test_keys_survive_a_restart(tmp_path: Path, stop: str) -> None:
    state = tmp_path / "state"
    first = ServiceProcess(state_dir=state, workdir=tmp_path).start()
    try:
        async with http_client(first.base_url) as c:
            r1 = await c.post("/api/v1/updates", json=ROWS, headers=key("r1"))
            r2 = await c.post("/api/v1/updates", json=ROWS[:1], headers=key("r2"),
                              params={"wait": "false"})  # fmt: skip
            assert r1.status_code == 200 and r2.status_code == 202
    finally:
        first.terminate() if stop == "sigterm" else first.kill()
    with ServiceProcess(state_dir=state, workdir=tmp_path) as second:
        async with http_client(second.base_url) as c:
            again = await c.post("/api/v1/updates", json=ROWS, headers=key("r1"))
            assert again.status_code == 200 and again.json() == r1.json()
            again = await c.post(
                "/api/v1/updates", json=ROWS[:1], headers=key("r2"), params={"wait": "false"}
            )
            assert again.status_code == 202 and again.json() == r2.json()
            assert await next_seq(c) == 4


def crash_between_update_and_answer(state: Path) -> None:
    """What a crash leaves after key "late" was noted and its updates fsynced in the update
    log, but before the answer was recorded; and after key "lost" was noted but before its
    updates were written."""
    batch = UpdateBatch.from_arrays(
        np.full(2, OP_INSERT), np.array([1, 2]), np.array([2, 3]),
        ts=np.array([1.0, 1.0]),
    )  # fmt: skip
    updates = RecordLog(state / "updates.log")
    updates.append(encode_binary(batch, batch.ts))
    updates.close()
    store = RecordLog(state / "idempotency.log")
    for k, index in (("late", 0), ("lost", 1)):
        h = request_hash(json.dumps(ROWS[:2]).encode(), True)
        entry = {"op": "begin", "key": k, "hash": h, "at": 4e9, "wait": True, "log": index}
        store.append(json.dumps(entry).encode())
    store.close()


async def test_crash_between_durable_updates_and_the_answer(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    crash_between_update_and_answer(state)
    body = json.dumps(ROWS[:2]).encode()
    headers = {"content-type": "application/json"}
    with ServiceProcess(state_dir=state, workdir=tmp_path) as svc:
        async with http_client(svc.base_url) as c:
            for _ in range(100):  # 409 until the replay settles it, then its answer
                r = await c.post("/api/v1/updates", content=body, headers=headers | key("late"))
                if r.status_code != 409:
                    break
                await asyncio.sleep(0.05)
            assert r.status_code == 200, r.text
            assert r.json()["first_seq"] == 0 and r.json()["outcomes"] == {"applied": 2}
            assert r.json()["durable"]["entry"] == 0
            assert await next_seq(c) == 2  # applied once, by the replay
            # "lost" never reached the log: forgotten, so the retry applies it
            r = await c.post("/api/v1/updates", content=body, headers=headers | key("lost"))
            assert r.status_code == 200 and r.json()["first_seq"] == 2
            assert "idempotent-replayed" not in r.headers


async def test_the_window(tmp_path: Path) -> None:
    with ServiceProcess("--idempotency-window-s", "0.5", workdir=tmp_path) as svc:
        async with http_client(svc.base_url) as c:
            rows = ROWS[:1]
            assert (await c.post("/api/v1/updates", json=rows, headers=key("w"))).is_success
            await asyncio.sleep(0.7)
            r = await c.post("/api/v1/updates", json=rows, headers=key("w"))
            assert r.status_code == 200 and "idempotent-replayed" not in r.headers
            assert r.json()["first_seq"] == 1  # past the window: a new request
