"""Websocket outputs of a real ``dcsm serve``: exact deltas and counts against the CPU engine
run directly, backfill, gap frames for a slow client, close codes."""

from __future__ import annotations

import asyncio
import json
import socket

import numpy as np
import pytest
from helpers import (
    PATH,
    SQUARE,
    TRI,
    http_client,
    metric_value,
    oracle_counts,
    oracle_deltas,
    read_frames,
    sorted_deltas,
    spec,
    updates_json,
    ws_connect,
)
from websockets.exceptions import ConnectionClosed

from dcsm.engine import make_engine
from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream


async def post_all(c, rows: list[dict], chunk: int = 200) -> None:
    for i in range(0, len(rows), chunk):
        r = await c.post("/api/v1/updates", json=rows[i : i + chunk])
        assert r.status_code == 200, r.text


def counts_of(frames: list[dict]) -> dict[int, int]:
    out: dict[int, int] = {}
    for f in frames:
        assert f["type"] == "count", f
        out[f["seq"]] = out.get(f["seq"], 0) + f["sign"] * f["count"]
    return out


async def test_websocket_deltas_and_counts_match_the_engine(service: ServiceProcess) -> None:
    batch = powerlaw_stream(120, 1500, num_labels=2, seed=21)
    expected = oracle_deltas(batch, [(TRI, 0), (PATH, 0)])
    exp_tri = [d for d in expected if d[0] == "tri"]
    exp_path = [d for d in expected if d[0] == "path"]
    exp_square = oracle_counts(batch, SQUARE)
    assert len(exp_tri) > 100 and len(exp_path) > 100 and exp_square  # a workload that matters
    async with http_client(service.base_url) as c:
        for p in (TRI, PATH):
            assert (await c.post("/api/v1/queries", json=spec(p))).status_code == 201
        r = await c.post("/api/v1/queries", json=spec(SQUARE), params={"mode": "count"})
        assert r.status_code == 201
        async with (
            ws_connect(service.ws_url("tri")) as w_tri,
            ws_connect(service.ws_url("tri")) as w_tri2,
            ws_connect(service.ws_url("path")) as w_path,
            ws_connect(service.ws_url("square", "counts")) as w_square,
            ws_connect(service.ws_url("tri", "counts")) as w_tri_counts,
        ):
            await post_all(c, updates_json(batch))
            got = await asyncio.gather(
                read_frames(w_tri, len(exp_tri), 60, stop_on_idle_s=0.5),
                read_frames(w_tri2, len(exp_tri), 60, stop_on_idle_s=0.5),
                read_frames(w_path, len(exp_path), 60, stop_on_idle_s=0.5),
                read_frames(w_square, 0, 10, stop_on_idle_s=1.0),
                read_frames(w_tri_counts, 0, 10, stop_on_idle_s=1.0),
            )
    tri, tri2, path, square, tri_counts = got
    assert sorted_deltas(tri) == exp_tri
    assert sorted_deltas(tri2) == exp_tri
    assert sorted_deltas(path) == exp_path
    assert counts_of(square) == exp_square
    tri_by_seq: dict[int, int] = {}
    for _, sign, seq, _ in exp_tri:
        tri_by_seq[seq] = tri_by_seq.get(seq, 0) + sign
    assert counts_of(tri_counts) == tri_by_seq
    for frames in (tri, path):
        seqs = [f["seq"] for f in frames]
        assert seqs == sorted(seqs), "per-query order must follow seq"
        assert all(f["arrival_ts"] <= f["emitted_ts"] for f in frames)


async def test_backfill_then_live_deltas_on_first_subscriber(service: ServiceProcess) -> None:
    batch = powerlaw_stream(60, 500, num_labels=2, seed=4)
    first, rest = batch.slice(0, 300), batch.slice(300, 500)
    oracle = make_engine("cpu")
    oracle.apply(first)
    static = sorted(tuple(m) for m in oracle.match_static(TRI).tolist())
    live = [d for d in oracle_deltas(batch, [(TRI, 300)]) if d[2] >= 300]
    assert static and live and len(static) + len(live) < 10_000  # within the pending bound
    async with http_client(service.base_url) as c:
        await post_all(c, updates_json(first))
        r = await c.post("/api/v1/queries", json=spec(TRI), params={"backfill": "true"})
        assert r.status_code == 201 and r.json()["backfill"] == len(static)
        assert r.json()["from_seq"] == 300
        await post_all(c, updates_json(rest))
        # Connected after registration and after the live updates: still gets everything.
        async with ws_connect(service.ws_url("tri")) as ws:
            frames = await read_frames(ws, len(static) + len(live), 60, stop_on_idle_s=0.5)
    back = [f for f in frames if f.get("backfill")]
    assert sorted(tuple(f["match"]) for f in back) == static
    assert all(f["sign"] == 1 and f["seq"] == 300 for f in back)
    assert frames[: len(back)] == back, "backfill comes before live deltas"
    assert sorted_deltas(frames[len(back) :]) == live


async def test_slow_client_gets_gap_frames_and_fast_client_everything(
    service: ServiceProcess,
) -> None:
    batch = powerlaw_stream(150, 6000, num_labels=1, seed=8, delete_fraction=0.2)
    rows = updates_json(batch)
    async with http_client(service.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
        # The slow client: a tiny receive buffer, a tiny client queue, and it reads nothing
        # until the stream is over. Its server-side queue holds 16 frames.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", service.port))
        async with (
            ws_connect(
                service.ws_url("tri", queue=16), sock=sock, max_queue=1, ping_interval=None
            ) as slow,
            ws_connect(service.ws_url("tri")) as fast,
        ):
            fast_reader = asyncio.create_task(read_frames(fast, 0, 120, stop_on_idle_s=3.0))
            sent = 0
            for i in range(0, len(rows), 500):
                await post_all(c, rows[i : i + 500], chunk=500)
                sent = i + 500
                metrics = (await c.get("/metrics")).text
                dropped = metric_value(metrics, "dcsm_websocket_dropped_frames_total")
                if dropped > 1000:
                    break
            assert dropped > 0, "the slow client never fell behind"
            fast_frames = await fast_reader
            slow_frames = await read_frames(slow, 0, 60, stop_on_idle_s=2.0)
    expected = oracle_deltas(batch.slice(0, min(sent, len(batch))), [(TRI, 0)])
    assert sorted_deltas(fast_frames) == expected
    assert not [f for f in fast_frames if "type" in f]
    gaps = [f for f in slow_frames if f.get("type") == "gap"]
    got = [f for f in slow_frames if "type" not in f]
    assert gaps, "a slow client must be told about dropped frames"
    assert sum(g["dropped"] for g in gaps) + len(got) == len(expected)
    # What the slow client did get is expected deltas only, in seq order.
    assert set(sorted_deltas(got)) <= set(expected)
    seqs = [f["seq"] for f in got]
    assert seqs == sorted(seqs)


async def test_websocket_close_codes(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        r = await c.post("/api/v1/queries", json=spec(TRI), params={"mode": "count"})
        assert r.status_code == 201
        for url, code in (
            (service.ws_url("nope"), 4404),
            (service.ws_url("tri", "matches"), 4409),
        ):
            async with ws_connect(url) as ws:
                with pytest.raises(ConnectionClosed) as info:
                    await asyncio.wait_for(ws.recv(), 10)
                assert info.value.rcvd is not None and info.value.rcvd.code == code
        async with ws_connect(service.ws_url("tri", "counts")) as ws:
            await c.post("/api/v1/updates", json=[{"op": "insert", "u": 1, "v": 2}])
            r = await c.delete("/api/v1/queries/tri")
            assert r.status_code == 200
            frames = await read_frames(ws, 0, 10, stop_on_idle_s=2.0)
        assert frames and frames[-1] == {"type": "end", "reason": "query deleted"}
        assert json.dumps(frames[-1])
        assert np.all([f["type"] in ("count", "end") for f in frames])
