"""HTTP API against a real ``dcsm serve`` subprocess; expected deltas from the CPU engine."""

from __future__ import annotations

import dataclasses

import httpx
import numpy as np
import pytest
from helpers import (
    PATH,
    TRI,
    http_client,
    oracle_deltas,
    spec,
    updates_json,
)

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import OP_INSERT, UpdateBatch
from dcsm.schemas import QuerySpec


async def post_updates(c: httpx.AsyncClient, batch: UpdateBatch, chunk: int = 250) -> list[dict]:
    replies = []
    rows = updates_json(batch)
    for i in range(0, len(rows), chunk):
        r = await c.post("/api/v1/updates", json=rows[i : i + chunk])
        assert r.status_code == 200, r.text
        replies.append(r.json())
    return replies


async def test_register_lifecycle_and_errors(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        r = await c.post("/api/v1/queries", json=spec(TRI))
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["name"] == "tri" and body["from_seq"] == 0 and body["mode"] == "embeddings"
        assert (
            QuerySpec.model_validate(body["query"]).to_pattern().edges.tolist()
            == TRI.edges.tolist()
        )

        r = await c.post("/api/v1/queries", json=spec(TRI))
        assert r.status_code == 409
        err = r.json()["error"]
        assert err["code"] == "already_exists" and err["status"] == 409 and "tri" in err["message"]

        batch = powerlaw_stream(60, 300, num_labels=2, seed=3)
        await post_updates(c, batch)
        # Registered after 300 updates: live from seq 300 exactly.
        r = await c.post("/api/v1/queries", json=spec(PATH))
        assert r.status_code == 201 and r.json()["from_seq"] == 300

        r = await c.get("/api/v1/queries", params={"pageSize": 1})
        page = r.json()
        assert [q["name"] for q in page["items"]] == ["path"] and page["nextPageToken"]
        r = await c.get(
            "/api/v1/queries", params={"pageSize": 1, "pageToken": page["nextPageToken"]}
        )
        assert [q["name"] for q in r.json()["items"]] == ["tri"] and r.json()[
            "nextPageToken"
        ] is None

        expected = oracle_deltas(batch, [(TRI, 0)])
        plus = sum(1 for d in expected if d[1] == 1)
        minus = len(expected) - plus
        r = await c.get("/api/v1/queries/tri")
        stats = r.json()["stats"]
        assert stats["deltas"] == {"+": plus, "-": minus}
        assert stats["updates_seen"] == 300
        lat = stats["match_latency_seconds"]
        assert lat["window"] == min(len(expected), 4096)
        if expected:
            assert 0 <= lat["p50"] <= lat["p95"] <= lat["p99"] < 30

        r = await c.delete("/api/v1/queries/tri")
        assert r.status_code == 200 and r.json()["stats"]["deltas"] == {"+": plus, "-": minus}
        for method in ("get", "delete"):
            r = await getattr(c, method)("/api/v1/queries/tri")
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        # The name is free again.
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201


def q(n: int = 2, edges: tuple = ((0, 1),), **extra: object) -> dict:
    """A query body with n vertices and the given (u, v) edges."""
    return {
        "name": "x",
        "vertices": [{"id": i} for i in range(n)],
        "edges": [{"u": u, "v": v} for u, v in edges],
    } | extra


BAD_SPECS = [
    (q(edges=((0, 0),)), "edges[0]", "self loop"),
    (q(edges=((0, 5),)), "edges[0].v", "not declared"),
    (q(n=3), "edges", "disconnected"),
    (q(name="bad name!"), "name", "pattern"),
    (q(n=17), "vertices", "at most 16"),
    (q(edges=[]), "edges", "at least 1"),
    (q() | {"edges": [{"u": 0, "v": 1, "label": -2}]}, "edges[0].label", "greater than or equal"),
    (q(colour=1), "colour", "Extra inputs"),
    (q(mode="all"), "mode", "embeddings"),
]


async def test_invalid_query_specs_get_422_naming_the_field(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        for body, field, reason in BAD_SPECS:
            r = await c.post("/api/v1/queries", json=body)
            assert r.status_code == 422, (body, r.text)
            err = r.json()["error"]
            assert err["code"] == "invalid_argument" and err["status"] == 422
            assert any(d["field"] == field and reason in d["reason"] for d in err["details"]), err
        r = await c.post(
            "/api/v1/queries", content=b"{oops", headers={"content-type": "application/json"}
        )
        assert r.status_code == 422 and r.json()["error"]["details"]
        assert (await c.get("/api/v1/queries")).json()["items"] == []
        assert (await c.get("/readyz")).status_code == 200


async def test_bad_updates_are_refused_and_nothing_valid_is_lost(service: ServiceProcess) -> None:
    batch = powerlaw_stream(50, 400, num_labels=2, seed=5)
    rows = updates_json(batch)
    async with http_client(service.base_url) as c:
        assert (await c.post("/api/v1/queries", json=spec(TRI))).status_code == 201
        await post_updates(c, batch.slice(0, 200))
        bad_requests = [
            (rows[:3] + [{"op": "upsert", "u": 1, "v": 2}], 422, "[3].op"),
            ([{"op": "insert", "u": 7, "v": 7}], 422, "[0]"),
            ([{"op": "insert", "u": 1}], 422, "[0].v"),
            ({"op": "insert", "u": 1, "v": 2}, 422, "body"),
            ([{"op": "insert", "u": 1, "v": 2}] * 5001, 413, "body"),
        ]
        for body, status, field in bad_requests:
            r = await c.post("/api/v1/updates", json=body)
            assert r.status_code == status, r.text
            assert any(d["field"] == field for d in r.json()["error"]["details"]), r.text
        r = await c.post(
            "/api/v1/updates", content=b"[{", headers={"content-type": "application/json"}
        )
        assert r.status_code == 422
        # A label conflict is applied as "rejected" and reported, with its seq, and the
        # valid updates around it go through.
        u0 = int(batch.u[0])
        conflict = {"op": "insert", "u": u0, "v": 10**9, "u_label": int(batch.u_label[0]) + 1}
        r = await c.post("/api/v1/updates", json=rows[200:300] + [conflict] + rows[300:])
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["first_seq"] == 200 and body["rejected"] == [
            {"index": 100, "seq": 300, "reason": "label_conflict"}
        ]
        assert sum(body["outcomes"].values()) == 201
        stats = (await c.get("/api/v1/queries/tri")).json()["stats"]
        metrics = (await c.get("/metrics")).text
    # Oracle: the same 401 updates (the conflict included) through the CPU engine.
    bad = UpdateBatch.from_arrays(
        np.array([OP_INSERT]), np.array([u0]), np.array([10**9]),
        u_label=np.array([int(batch.u_label[0]) + 1]),
    )  # fmt: skip
    full = UpdateBatch.concat([batch.slice(0, 300), bad, batch.slice(300, 400)])
    full = dataclasses.replace(full, seq=np.arange(401))
    expected = oracle_deltas(full, [(TRI, 0)])
    plus = sum(1 for d in expected if d[1] == 1)
    assert stats["deltas"] == {"+": plus, "-": len(expected) - plus}
    assert stats["updates_seen"] == 401
    assert 'dcsm_updates_total{op="insert",outcome="label_conflict"} 1.0' in metrics
    assert "dcsm_response_seconds_bucket" in metrics and "dcsm_engine_memory_bytes" in metrics


async def test_ops_endpoints(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        assert (await c.get("/healthz")).json() == {"status": "ok"}
        ready = (await c.get("/readyz")).json()
        assert ready["ready"] and "kafka" not in ready["checks"]
        assert (await c.get("/docs")).status_code == 200
        paths = (await c.get("/openapi.json")).json()["paths"]
        assert {"/api/v1/queries", "/api/v1/queries/{name}", "/api/v1/updates"} <= set(paths)
        r = await c.get("/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("mode_in", ["body", "param"])
async def test_count_mode_and_backfill(service: ServiceProcess, mode_in: str) -> None:
    batch = powerlaw_stream(40, 300, num_labels=1, seed=11)
    async with http_client(service.base_url) as c:
        await post_updates(c, batch)
        body = spec(TRI) | ({"mode": "count"} if mode_in == "body" else {})
        params = {"backfill": "true"} | ({"mode": "count"} if mode_in == "param" else {})
        r = await c.post("/api/v1/queries", json=body, params=params)
        assert r.status_code == 201, r.text
        assert r.json()["mode"] == "count"
        backfill = r.json()["backfill"]
        # The same pattern in embeddings mode backfills one + delta per match.
        r = await c.post(
            "/api/v1/queries", json=spec(TRI, name="tri2"), params={"backfill": "true"}
        )
        assert r.json()["backfill"] == backfill
    expected = oracle_deltas(batch, [(TRI, 0)])
    # Backfill = matches in the graph now = all + deltas minus all - deltas so far.
    assert backfill == sum(d[1] for d in expected)


@pytest.mark.parametrize("fmt", ["csm", "snap"])
async def test_initial_graph_file_then_backfill_and_live(tmp_path, fmt: str) -> None:
    from dcsm.engine import make_engine
    from dcsm.graphio import read_graph

    stream = powerlaw_stream(70, 600, num_labels=1, seed=9, delete_fraction=0.0)
    edges = sorted(
        {(min(u, v), max(u, v)) for u, v in zip(stream.u.tolist(), stream.v.tolist(), strict=True)}
    )
    path = tmp_path / f"g.{fmt}"
    if fmt == "csm":
        ids = sorted({x for e in edges for x in e})
        path.write_text(
            "".join(f"v {x} 0\n" for x in ids) + "".join(f"e {u} {v} 0\n" for u, v in edges)
        )
    else:
        path.write_text("# SNAP\n" + "".join(f"{v}\t{u}\n{u}\t{v}\n" for u, v in edges))
    graph = read_graph(path)
    oracle = make_engine("cpu")
    oracle.load_graph(graph)
    static = oracle.count_static(TRI)
    more = powerlaw_stream(70, 200, num_labels=1, seed=10)
    live = oracle_deltas(more, [(TRI, 0)], graph=graph)
    assert static > 0 and live
    with ServiceProcess("--graph", str(path), workdir=tmp_path) as svc:
        async with http_client(svc.base_url) as c:
            r = await c.post("/api/v1/queries", json=spec(TRI), params={"backfill": "true"})
            assert r.status_code == 201 and r.json()["backfill"] == static
            await post_updates(c, more)
            stats = (await c.get("/api/v1/queries/tri")).json()["stats"]
    plus = sum(1 for d in live if d[1] == 1)
    assert stats["deltas"] == {"+": plus, "-": len(live) - plus}
