"""HTTP and websocket API (FastAPI; OpenAPI at ``/docs``).

==========================================  ==================================================
``POST /api/v1/queries``                    register (QuerySpec body, optional ``"mode"``,
                                            ``"replica"``); ``?backfill=true``,
                                            ``?mode=count``; 201/400/409/422
``GET /api/v1/queries``                     ``{"items", "nextPageToken"}``; ``pageSize``,
                                            ``pageToken``
``GET /api/v1/queries/{name}``              definition and stats; 404
``DELETE /api/v1/queries/{name}``           unregister; final stats; 404
``POST /api/v1/updates``                    JSON array of EdgeUpdate; durable, then applied;
                                            outcomes; ``?wait=false``: 202 once durable;
                                            ``Idempotency-Key``: a retry gets the first answer
``GET /api/v1/status``                      sequence position, queues, engine, Kafka
``WS /api/v1/queries/{name}/matches``       MatchDelta frames (+ gap/end frames);
                                            ``?encoding=batch``: a frame per engine batch
``WS /api/v1/queries/{name}/counts``        per-update count frames (``?encoding=``)
``GET /healthz``, ``/readyz``, ``/metrics``
==========================================  ==================================================

Every error body is ``{"error": {"code", "status", "message", "details": [{"field",
"reason"}]}}`` (:class:`dcsm.schemas.api.ErrorEnvelope`); :mod:`dcsm.service.openapi` lists it
for every status each route can answer, and documents the websockets and their frames.

Access (:mod:`dcsm.service.auth`): with tokens configured, every route but ``/docs`` needs
``Authorization: Bearer <token>``: a write token to register, delete and ingest, a read (or
write) token for the rest; ``/healthz``/``/readyz`` and ``/metrics`` are open when
``open_health``/``open_metrics`` say so. 401 without a known token, 403 with a read token
where write is needed; websockets are closed with 1008 instead.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import numpy as np
from fastapi import (
    Body,
    Depends,
    FastAPI,
    Header,
    Query,
    Request,
    WebSocket,
    WebSocketDisconnect,
)
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import Field
from starlette.exceptions import HTTPException as StarletteHTTPException

import dcsm
from dcsm.errors import DcsmError
from dcsm.schemas import EdgeUpdate, QuerySpec, to_batch
from dcsm.schemas.api import Readiness, UpdatesAccepted, UpdatesApplied

from .app import Service
from .auth import Auth, auth_from_settings
from .codec import json_error_position, validation_details
from .errors import BatchTooLarge, QueryNotFound, ServiceError
from .frames import Encoding
from .idempotency import check_key, request_hash, updates_answer
from .openapi import body, errors, install_openapi
from .page import install_page
from .queries import Mode, QueryState
from .subscribers import Subscriber

WS_CLOSE_NOT_FOUND = 4404
WS_CLOSE_WRONG_KIND = 4409


class QueryCreate(QuerySpec):
    """A QuerySpec plus how its matches are reported."""

    mode: Mode = Field(
        default="embeddings",
        description="embeddings: every match delta; count: per-update counts only",
    )
    encoding: Encoding | None = Field(
        default=None,
        description="frames on the matches topic: json (one per delta or count) or batch "
        "(one per engine batch); default: the service's matches_encoding",
    )
    max_deltas_per_update: int | None = Field(
        default=None,
        ge=1,
        description="embeddings mode: most deltas shipped per update; past it one overflow "
        "frame says how many were not shipped (counts stay exact); default: the service's "
        "max_deltas_per_update",
    )
    replica: int | None = Field(
        default=None,
        ge=0,
        description="replicas in shard mode queries: the replica that must match this query "
        "(0..N-1; 400 if out of range or with --shard updates); default: the replica owning "
        "the fewest queries. A single service accepts only 0",
    )


def _error(status: int, code: str, message: str, details: list[dict[str, str]]) -> JSONResponse:
    body = {"error": {"code": code, "status": status, "message": message, "details": details}}
    return JSONResponse(body, status_code=status)


def create_app(service: Service, auth: Auth | None = None) -> FastAPI:
    """The API of ``service``; ``auth``: its access rules (default: from its settings)."""
    auth = auth if auth is not None else auth_from_settings(service.settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        service.start_background()
        yield
        await service.stop()

    app = FastAPI(
        title="dcsm",
        version=dcsm.__version__,
        summary="Continuous subgraph matching as a streaming service",
        lifespan=lifespan,
        docs_url=None,  # page.install_page serves /docs
        redoc_url=None,  # ReDoc fetches from a CDN; /docs works offline
    )
    app.state.service = service
    _install_errors(app)
    _install_queries(app, service, auth)
    _install_updates(app, service, auth)
    _install_websockets(app, service, auth)
    _install_ops(app, service, auth)
    install_page(app)
    install_openapi(app)
    return app


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def service_error(_: Request, exc: ServiceError) -> JSONResponse:
        response = _error(exc.status, exc.code, exc.message, exc.details)
        response.headers.update(getattr(exc, "headers", {}))
        return response

    @app.exception_handler(DcsmError)
    async def dcsm_error(_: Request, exc: DcsmError) -> JSONResponse:
        return _error(400, "invalid_argument", str(exc), [])

    @app.exception_handler(Exception)
    async def internal(_: Request, exc: Exception) -> JSONResponse:
        return _error(500, "internal", f"{type(exc).__name__}: {exc}", [])

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = []
        for err in exc.errors():
            if err.get("type") == "json_invalid" and isinstance(exc.body, str | bytes):
                # FastAPI locates it as ("body", character offset), which reads like an
                # array index ("[12]"): name the line and column instead.
                where = json_error_position(exc.body, int(err["loc"][-1]))
                reason = f"{where}: {(err.get('ctx') or {}).get('error', 'not valid JSON')}"
                details.append({"field": "body", "reason": reason})
                continue
            for d in validation_details([err]):
                field = d["field"]
                if field.startswith("body"):
                    field = field[len("body") :].lstrip(".") or "body"
                elif field.startswith("query."):
                    field = field[len("query.") :]
                details.append({"field": field, "reason": d["reason"]})
        message = "; ".join(f"{d['field']}: {d['reason']}" for d in details[:5])
        return _error(422, "invalid_argument", f"invalid request: {message}", details)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "error")
        return _error(exc.status_code, code, str(exc.detail), [])


def _describe(st: QueryState, stats: dict[str, Any] | None = None) -> dict[str, Any]:
    out = st.describe()
    out["stats"] = stats if stats is not None else st.stats.as_dict()
    out["subscribers"] = len(st.subscribers) + len(st.count_subscribers)
    return out


def _install_queries(app: FastAPI, service: Service, auth: Auth) -> None:
    catalog = service.catalog
    read = [Depends(auth.require("read"))]
    write = [Depends(auth.require("write"))]

    @app.post(
        "/api/v1/queries", status_code=201, tags=["queries"], dependencies=write,
        responses=errors(400, 401, 403, 409, 422, 503),
    )  # fmt: skip
    async def create_query(
        spec: QueryCreate,
        backfill: Annotated[
            bool, Query(description="first report the matches already there")
        ] = False,
        mode: Annotated[Mode | None, Query(description="overrides the body's mode")] = None,
    ) -> dict[str, Any]:
        """Register a query; it sees every update from the returned ``from_seq`` on."""
        chosen: Mode = mode or spec.mode
        encoding: Encoding = spec.encoding or service.settings.matches_encoding  # type: ignore[assignment]
        base = QuerySpec.model_validate(
            spec.model_dump(exclude={"mode", "encoding", "max_deltas_per_update", "replica"})
        )
        st, n_backfill = await service.register_query(
            base, chosen, encoding, backfill, spec.max_deltas_per_update, spec.replica
        )
        out = st.describe()
        out["backfill"] = n_backfill if backfill else None
        return out

    @app.get(
        "/api/v1/queries", tags=["queries"], dependencies=read,
        responses=errors(400, 401, 403, 422),
    )  # fmt: skip
    async def list_queries(
        page_size: Annotated[int, Query(alias="pageSize", ge=1, le=1000)] = 100,
        page_token: Annotated[str | None, Query(alias="pageToken")] = None,
    ) -> dict[str, Any]:
        items, nxt = catalog.page(page_size, page_token)
        return {"items": [st.describe() for st in items], "nextPageToken": nxt}

    @app.get(
        "/api/v1/queries/{name}", tags=["queries"], dependencies=read,
        responses=errors(401, 403, 404),
    )  # fmt: skip
    async def get_query(name: str) -> dict[str, Any]:
        return _describe(catalog.get(name))

    @app.delete(
        "/api/v1/queries/{name}", tags=["queries"], dependencies=write,
        responses=errors(401, 403, 404, 503),
    )  # fmt: skip
    async def delete_query(name: str) -> dict[str, Any]:
        """Unregister; returns the final stats once every delta before it is emitted."""
        st, final = await service.unregister_query(name)
        return _describe(st, final)


def _install_updates(app: FastAPI, service: Service, auth: Auth) -> None:
    limit = service.settings.max_record_updates

    @app.post(
        "/api/v1/updates", tags=["updates"], dependencies=[Depends(auth.require("write"))],
        responses=errors(400, 401, 403, 409, 413, 422, 503, ok={
            200: body(UpdatesApplied, "applied: outcomes, and the rejected updates"),
            202: body(UpdatesAccepted, "wait=false: durable, not yet applied"),
        }),
    )  # fmt: skip
    async def post_updates(
        request: Request,
        updates: Annotated[list[EdgeUpdate], Body(description="edge updates in order")],
        wait: Annotated[
            bool,
            Query(description="answer once applied, with outcomes; false: 202 once durable"),
        ] = True,
        idempotency_key: Annotated[
            str | None,
            Header(
                alias="Idempotency-Key",
                description="a retry with this key within idempotency_window_s gets the "
                "first answer and applies nothing",
            ),
        ] = None,
    ) -> Any:
        """Updates are made durable first (with Kafka: produced to the input topic like any
        producer's; without: fsynced to the update log), then go through the one global
        sequence. ``wait=false`` answers 202 as soon as they are durable."""
        arrival = time.time()
        service.check_accepting()
        if len(updates) > limit:
            raise BatchTooLarge(
                f"{len(updates)} updates in one request; at most {limit}",
                [{"field": "body", "reason": f"more than {limit} updates; split the batch"}],
            )
        if not updates:  # nothing to apply, with or without a key
            return {"accepted": 0, "first_seq": None, "last_seq": None, "outcomes": {},
                    "rejected": []}  # fmt: skip
        store = service.idempotency
        if idempotency_key is not None:
            check_key(idempotency_key)
            digest = request_hash(await request.body(), wait)
            first = await store.lookup(idempotency_key, digest)
            if first is not None:
                status, body = first
                return JSONResponse(body, status, {"Idempotent-Replayed": "true"})
            store.reserve(idempotency_key, digest, wait)
        ts = np.array([u.ts or arrival for u in updates], np.float64)
        try:
            acc = await service.submit_updates(to_batch(updates, 0, ts), wait, idempotency_key)
        except BaseException as exc:
            if idempotency_key is not None:
                store.release(idempotency_key, exc)  # only if nothing was noted durably
            raise
        if acc.outcome is None or acc.seq is None:
            last = acc.first_seq + acc.count - 1 if acc.first_seq is not None else None
            head = {"accepted": acc.count, "first_seq": acc.first_seq, "last_seq": last,
                    "durable": acc.position}  # fmt: skip
            if idempotency_key is not None:
                await store.complete(idempotency_key, 202, head)
            return JSONResponse(head, status_code=202)
        if idempotency_key is not None:  # recorded as the fan-out settled the updates
            return store.answer(idempotency_key)[1]
        return updates_answer(acc.count, acc.position, acc.seq, acc.outcome)


def _install_websockets(app: FastAPI, service: Service, auth: Auth) -> None:
    async def stream(
        ws: WebSocket,
        name: str,
        kind: Literal["matches", "counts"],
        queue: int | None,
        encoding: Encoding,
    ) -> None:
        if not await auth.websocket(ws, "read"):
            return
        try:
            st = service.catalog.get(name)
        except QueryNotFound as exc:
            await ws.close(WS_CLOSE_NOT_FOUND, exc.message[:120])
            return
        if st.closing:
            await ws.close(WS_CLOSE_NOT_FOUND, f"query {name!r} is being deleted")
            return
        if kind == "matches" and st.mode == "count":
            await ws.close(WS_CLOSE_WRONG_KIND, f"query {name!r} is count-only; use /counts")
            return
        cap = service.settings.ws_queue_frames
        bound = min(queue, cap) if queue else cap
        own_kind = (kind == "matches") == (st.mode == "embeddings")
        if own_kind and st.pending is not None and st.pending.encoding == encoding:
            # The first subscriber gets everything since registration (backfill included).
            sub, st.pending = st.pending, None
            sub.max_frames = bound
        else:
            sub = Subscriber(bound, service.on_drop, encoding)
            if own_kind and st.pending is not None:
                # Nobody claims it now: filling it (to its bound, then dropping) would cost
                # the fan-out encoding work for every update, for ever.
                st.pending = None
        subs = st.subscribers if kind == "matches" else st.count_subscribers
        subs.add(sub)

        async def watch_client() -> None:
            try:
                while (await ws.receive())["type"] != "websocket.disconnect":
                    pass
            except Exception:
                pass
            sub.close()

        watcher = asyncio.create_task(watch_client())
        try:
            sent = 0
            while (frame := await sub.next()) is not None:
                await ws.send_text(frame)
                sent += 1
                if sent % 64 == 0:
                    # Neither next() nor a send to a writable socket yields: without this a
                    # long queue would be sent in one go, holding the loop from the fan-out
                    # and the API.
                    await asyncio.sleep(0)
            await ws.close(1000)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass
        finally:
            subs.discard(sub)
            watcher.cancel()

    @app.websocket("/api/v1/queries/{name}/matches")
    async def matches(
        ws: WebSocket, name: str, queue: int | None = None, encoding: Encoding = "json"
    ) -> None:
        """DeltaFrame per match delta (``encoding=batch``: DeltasBatchFrame per engine
        batch); GapFrame ``{"type": "gap", "dropped": N}`` when this client fell behind;
        EndFrame ``{"type": "end", "reason"}`` when the query is deleted. ``queue``: frame
        bound. Closes 4404 (no such query), 4409 (count-only query), 1008 (auth). Schemas:
        ``components.schemas`` and ``x-websockets`` of /openapi.json."""
        await stream(ws, name, "matches", queue, encoding)

    @app.websocket("/api/v1/queries/{name}/counts")
    async def counts(
        ws: WebSocket, name: str, queue: int | None = None, encoding: Encoding = "json"
    ) -> None:
        """CountFrame ``{"type": "count", "seq", "sign", "count", ...}`` per update and sign
        (``encoding=batch``: CountsBatchFrame ``{"type": "counts"}`` per engine batch), then
        GapFrame and EndFrame as on /matches. Closes 4404 (no such query), 1008 (auth)."""
        await stream(ws, name, "counts", queue, encoding)


def _install_ops(app: FastAPI, service: Service, auth: Auth) -> None:
    health = [Depends(auth.require("read", open_if=auth.open_health))]
    metrics_access = [Depends(auth.require("read", open_if=auth.open_metrics))]

    @app.get("/healthz", tags=["ops"], dependencies=health, responses=errors(401, 403))
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz", tags=["ops"], dependencies=health,
        responses=errors(401, 403, ok={
            200: body(Readiness, "ready"), 503: body(Readiness, "not ready: why")
        }),
    )  # fmt: skip
    async def readyz() -> JSONResponse:
        checks = {
            "engine": service.worker.ready.is_set(),
            "pipeline": service.ready and service.accepting,
        }
        if service.ingest is not None:
            checks["kafka"] = service.ingest.connected
        ok = all(checks.values())
        body: dict[str, Any] = {"ready": ok, "checks": checks}
        if service.fatal:
            body["error"] = service.fatal
        if service.ingest is not None:
            body["lag"] = service.ingest.lag()
        sh = service.sharding
        if sh.active:
            body["replica"] = {"index": sh.index, "replicas": sh.replicas, "shard": sh.mode}
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get(
        "/metrics", tags=["ops"], dependencies=metrics_access, response_class=PlainTextResponse,
        responses=errors(401, 403, ok={200: {"description": "Prometheus text exposition"}}),
    )  # fmt: skip
    async def metrics() -> Response:
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get(
        "/api/v1/status", tags=["ops"], dependencies=[Depends(auth.require("read"))],
        responses=errors(401, 403),
    )  # fmt: skip
    async def status() -> dict[str, Any]:
        s = service.settings
        worker = service.worker
        kafka: dict[str, Any] | None = None
        if service.ingest is not None:
            kafka = {
                "bootstrap": s.kafka,
                "topic": s.updates_topic,
                "connected": service.ingest.connected,
                "records": service.ingest.records,
                "lag": service.ingest.lag(),
            }
        if service.output is not None:
            kafka = {**(kafka or {}), "output": {
                "buffered_frames": service.output.buffered,
                "delivery_failures": service.output.failures,
            }}  # fmt: skip
        ckpt = service.checkpointer.latest if service.checkpointer else service.restored
        checkpoint = None
        if ckpt is not None:
            checkpoint = {"next_seq": ckpt.next_seq, "positions": ckpt.positions,
                          "path": str(ckpt.path) if ckpt.path else None}  # fmt: skip
        return {
            "version": dcsm.__version__,
            "next_seq": service.sequencer.next_seq,
            "processed_seq": service.fanout.processed_seq,
            "queued_updates": service.sequencer.queued,
            "engine": {
                "backend": worker.backend_name or s.backend,
                "ready": worker.ready.is_set(),
                "memory_bytes": worker.memory_bytes,
            },
            "kafka": kafka,
            "checkpoint": checkpoint,
            "queries": len(service.catalog),
            "replica": {
                "index": service.sharding.index,
                "replicas": service.sharding.replicas,
                "shard": service.sharding.mode,
            },
            "uptime_seconds": time.time() - service.started_at,
        }
