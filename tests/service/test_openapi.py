"""/openapi.json against what a real ``dcsm serve`` sends: every status a set of requests
produces is documented for its route and its body validates against the documented schema;
websocket frames validate against the frame schemas ``x-websockets`` names; then a bounded
schemathesis run finds no 5xx and no undocumented status or body."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import TRI, http_client, read_frames, spec, ws_connect

from dcsm.loadgen.embedded import ServiceProcess

READ = "read-token-0123456789abcdef"
WRITE = "write-token-0123456789abcdef"
MAX_UPDATES = 5


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def secured(tmp_path: Path):
    env = {"DCSM_TOKEN_READ": READ, "DCSM_TOKEN_WRITE": WRITE,
           "DCSM_MAX_RECORD_UPDATES": str(MAX_UPDATES)}  # fmt: skip
    with ServiceProcess(workdir=tmp_path, env=env) as svc:
        yield svc


def validator(doc: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A JSON Schema 2020-12 validator of ``schema`` whose #/components refs resolve in
    ``doc`` (OpenAPI 3.1 schemas are JSON Schema)."""
    jsonschema_rs = pytest.importorskip("jsonschema_rs")  # comes with schemathesis
    return jsonschema_rs.validator_for({"components": doc["components"], **schema})


def check_documented(doc: dict[str, Any], method: str, route: str, r: httpx.Response) -> None:
    responses = doc["paths"][route][method.lower()]["responses"]
    where = f"{method} {route} -> {r.status_code} {r.text[:200]}"
    assert str(r.status_code) in responses, f"undocumented status: {where}"
    content = responses[str(r.status_code)].get("content", {})
    media = r.headers["content-type"].split(";")[0]
    assert media in content, f"undocumented content type {media}: {where}"
    schema = content[media].get("schema")
    if media == "application/json" and schema:
        errors = [e.message for e in validator(doc, schema).iter_errors(r.json())]
        assert not errors, f"body does not match the documented schema: {where}: {errors}"


async def test_every_answer_is_documented(secured: ServiceProcess) -> None:
    read, write = bearer(READ), bearer(WRITE)
    ok_row = {"op": "insert", "u": 1, "v": 2}
    # (method, documented route, path, request kwargs, expected status)
    cases: list[tuple[str, str, str, dict[str, Any], int]] = [
        ("GET", "/healthz", "/healthz", {}, 200),
        ("GET", "/readyz", "/readyz", {}, 200),
        ("GET", "/metrics", "/metrics", {}, 401),
        ("GET", "/metrics", "/metrics", {"headers": read}, 200),
        ("GET", "/api/v1/status", "/api/v1/status", {}, 401),
        ("GET", "/api/v1/status", "/api/v1/status", {"headers": bearer("nope" * 8)}, 401),
        ("GET", "/api/v1/status", "/api/v1/status", {"headers": read}, 200),
        ("POST", "/api/v1/queries", "/api/v1/queries", {"json": spec(TRI), "headers": read}, 403),
        ("POST", "/api/v1/queries", "/api/v1/queries", {"json": spec(TRI), "headers": write}, 201),
        ("POST", "/api/v1/queries", "/api/v1/queries", {"json": spec(TRI), "headers": write}, 409),
        (
            "POST",
            "/api/v1/queries",
            "/api/v1/queries",
            {"json": spec(TRI, name="c") | {"mode": "count"}, "headers": write},
            201,
        ),
        (
            "POST",
            "/api/v1/queries",
            "/api/v1/queries",
            {"json": {"name": "x", "vertices": [{"id": 0}], "edges": []}, "headers": write},
            422,
        ),
        (
            "POST",
            "/api/v1/queries",
            "/api/v1/queries",
            {
                "content": b'{"name": "x",\n "vertices": ]}',
                "headers": write | {"content-type": "application/json"},
            },
            422,
        ),
        ("GET", "/api/v1/queries", "/api/v1/queries", {"headers": read}, 200),
        (
            "GET",
            "/api/v1/queries",
            "/api/v1/queries",
            {"headers": read, "params": {"pageSize": 0}},
            422,
        ),
        (
            "GET",
            "/api/v1/queries",
            "/api/v1/queries",
            {"headers": read, "params": {"pageToken": "_w=="}},
            400,
        ),
        ("GET", "/api/v1/queries/{name}", "/api/v1/queries/tri", {"headers": read}, 200),
        ("GET", "/api/v1/queries/{name}", "/api/v1/queries/none", {"headers": read}, 404),
        ("DELETE", "/api/v1/queries/{name}", "/api/v1/queries/none", {"headers": write}, 404),
        ("DELETE", "/api/v1/queries/{name}", "/api/v1/queries/tri", {"headers": read}, 403),
        ("POST", "/api/v1/updates", "/api/v1/updates", {"json": [ok_row], "headers": write}, 200),
        (
            "POST",
            "/api/v1/updates",
            "/api/v1/updates",
            {"json": [ok_row | {"op": "delete"}], "headers": write, "params": {"wait": "false"}},
            202,
        ),
        (
            "POST",
            "/api/v1/updates",
            "/api/v1/updates",
            {"json": [ok_row] * (MAX_UPDATES + 1), "headers": write},
            413,
        ),
        (
            "POST",
            "/api/v1/updates",
            "/api/v1/updates",
            {"json": [{"op": "upsert", "u": 1, "v": 2}], "headers": write},
            422,
        ),
        (
            "POST",
            "/api/v1/updates",
            "/api/v1/updates",
            {"json": [ok_row], "headers": write | {"Idempotency-Key": "bad key"}},
            400,
        ),
        ("DELETE", "/api/v1/queries/{name}", "/api/v1/queries/c", {"headers": write}, 200),
    ]
    async with http_client(secured.base_url) as c:
        doc = (await c.get("/openapi.json")).json()
        seen: set[tuple[str, str, int]] = set()
        for method, route, path, kwargs, want in cases:
            r = await c.request(method, path, **kwargs)
            assert r.status_code == want, f"{method} {path}: {r.status_code} {r.text[:300]}"
            check_documented(doc, method, route, r)
            seen.add((method, route, r.status_code))
            if r.status_code == 422 and "content" in kwargs:
                reason = r.json()["error"]["details"][0]["reason"]
                assert reason.startswith("line 2, column 14: "), reason
        # A 503 (engine starting, draining) cannot be provoked here on demand: its documented
        # body is the same envelope, checked above for the other statuses.
        for route, ops in doc["paths"].items():
            for method, op in ops.items():
                for status in op["responses"]:
                    ref = str(op["responses"][status])
                    if status.startswith(("4", "5")) and "Readiness" not in ref:
                        assert "ErrorEnvelope" in ref, f"{method} {route} {status}: {ref}"
        assert "HTTPValidationError" not in str(doc)


async def test_websocket_frames_match_their_schemas(secured: ServiceProcess) -> None:
    auth = bearer(WRITE)
    async with http_client(secured.base_url) as c:
        doc = (await c.get("/openapi.json")).json()
        sockets = doc["x-websockets"]
        assert set(sockets) == {"/api/v1/queries/{name}/matches", "/api/v1/queries/{name}/counts"}
        for name in ("DeltaFrame", "CountFrame", "DeltasBatchFrame", "CountsBatchFrame",
                     "GapFrame", "EndFrame"):  # fmt: skip
            assert name in doc["components"]["schemas"]
            assert name in doc["info"]["description"]
        tri_count = spec(TRI, name="tric") | {"mode": "count"}
        for body in (spec(TRI), tri_count):
            assert (await c.post("/api/v1/queries", json=body, headers=auth)).status_code == 201
        rows = [{"op": "insert", "u": u, "v": v} for u, v in ((1, 2), (2, 3), (1, 3))]
        rows.append({"op": "delete", "u": 1, "v": 3})
        streams = [("tri", "matches", "json"), ("tri", "matches", "batch"),
                   ("tric", "counts", "json"), ("tric", "counts", "batch")]  # fmt: skip
        got: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        headers = {"Authorization": f"Bearer {READ}"}
        conns = [
            ws_connect(secured.ws_url(q, kind, encoding=enc), additional_headers=headers)
            for q, kind, enc in streams
        ]
        socks = [await conn.__aenter__() for conn in conns]
        try:
            assert (await c.post("/api/v1/updates", json=rows, headers=auth)).status_code == 200
            for key, ws in zip(streams, socks, strict=True):
                got[key] = await read_frames(ws, until=1, timeout_s=20, stop_on_idle_s=0.5)
            for q in ("tri", "tric"):
                assert (await c.delete(f"/api/v1/queries/{q}", headers=auth)).status_code == 200
            for key, ws in zip(streams, socks, strict=True):
                got[key] += await read_frames(ws, timeout_s=10, stop_on_idle_s=2)
        finally:
            for conn in conns:
                await conn.__aexit__(None, None, None)
    for (_, kind, enc), frames in got.items():
        route = f"/api/v1/queries/{{name}}/{kind}"
        names = sockets[route]["frames"]
        check = validator(doc, {"oneOf": [{"$ref": f"#/components/schemas/{n}"} for n in names]})
        types = [f.get("type", "delta") for f in frames]
        assert frames and types[-1] == "end", (kind, enc, types)
        data = {"json": {"delta", "count"}, "batch": {"deltas", "counts"}}[enc]
        assert data & set(types), (kind, enc, types)
        for f in frames:
            errors = [e.message for e in check.iter_errors(f)]
            assert not errors, f"{kind} {enc} frame {f} matches none of {names}: {errors}"


def test_schemathesis_finds_no_5xx_or_undocumented_answer(tmp_path: Path) -> None:
    """Bounded: a few examples per operation, positive and negative data, ~25 s of calls."""
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import (
        content_type_conformance,
        not_a_server_error,
        response_schema_conformance,
        status_code_conformance,
    )
    from schemathesis.generation import GenerationMode

    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_schema_conformance]  # fmt: skip
    with ServiceProcess(workdir=tmp_path, env={"DCSM_MAX_RECORD_UPDATES": "50"}) as svc:
        schema = schemathesis.openapi.from_url(f"{svc.base_url}/openapi.json")
        calls: dict[int, int] = {}
        budget = time.monotonic() + 25
        for result in schema.get_all_operations():
            op = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

                @given(case=op.as_strategy(generation_mode=mode))
                @settings(max_examples=8, deadline=None, database=None, derandomize=True,
                          suppress_health_check=list(HealthCheck))  # fmt: skip
                def run(case: Any) -> None:
                    if time.monotonic() > budget:
                        return
                    response = case.call(base_url=svc.base_url, timeout=30)
                    calls[response.status_code] = calls.get(response.status_code, 0) + 1
                    case.validate_response(response, checks=checks)

                try:
                    run()
                except Unsatisfiable:  # no negative data for an operation without inputs
                    assert mode == GenerationMode.NEGATIVE
        assert svc.proc is None or svc.proc.poll() is None, "the service died"
    assert sum(calls.values()) > 50, calls
    assert not [s for s in calls if s >= 500], calls
