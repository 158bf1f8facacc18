"""The OpenAPI document, made honest about what the service sends.

FastAPI documents a route's success body and, for routes with parameters, its own 422 shape
(``{"detail": [...]}``). This service answers every error with one envelope
(:class:`~dcsm.schemas.api.ErrorEnvelope`), so each route lists its error statuses through
:func:`errors` (which also replaces FastAPI's 422), and :func:`install_openapi` adds what
OpenAPI 3.1 cannot express: the websocket routes (``x-websockets``, and the description)
and their frame shapes (``components.schemas``), plus the bearer scheme of service/auth.py.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel

from dcsm.schemas.api import FRAMES, ErrorEnvelope

WHY = {
    400: "a value the service cannot use",
    401: "no bearer token, or an unknown one (only when tokens are configured)",
    403: "a read token where a write token is needed",
    404: "no such query",
    409: "the name is taken, or an Idempotency-Key's first request is unresolved",
    413: "more updates in one request than max_record_updates",
    422: "the request does not match its schema (body, query or header parameters); a JSON "
    "body that does not parse names its line and column",
    503: "the engine is starting, the service is draining, or it stopped",
}


def errors(
    *statuses: int, ok: dict[int, dict[str, Any]] | None = None
) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries: the error envelope for each status, plus ``ok`` (success
    statuses whose body FastAPI cannot infer, see :func:`body`)."""
    out: dict[int | str, dict[str, Any]] = {k: v for k, v in (ok or {}).items()}
    out.update({s: {"model": ErrorEnvelope, "description": WHY[s]} for s in statuses})
    return out


def body(model: type[BaseModel], description: str) -> dict[str, Any]:
    """A ``responses=`` entry whose body is ``model``."""
    return {"model": model, "description": description}


WEBSOCKETS: dict[str, dict[str, Any]] = {
    "/api/v1/queries/{name}/matches": {
        "summary": "Match deltas of an embeddings query",
        "parameters": {
            "queue": "integer; this subscriber's frame bound (at most ws_queue_frames)",
            "encoding": "json (a frame per delta, DeltaFrame) or batch (a frame per engine "
            "batch, DeltasBatchFrame)",
        },
        "frames": ["DeltaFrame", "DeltasBatchFrame", "GapFrame", "EndFrame"],
        "close_codes": {
            "1000": "the stream ended (after an EndFrame)",
            "1008": "no or unknown bearer token, or an Origin not allowed",
            "4404": "no such query, or it is being deleted",
            "4409": "the query is count-only; use /counts",
        },
    },
    "/api/v1/queries/{name}/counts": {
        "summary": "Per-update match counts of a query",
        "parameters": {
            "queue": "integer; this subscriber's frame bound (at most ws_queue_frames)",
            "encoding": "json (CountFrame) or batch (CountsBatchFrame)",
        },
        "frames": ["CountFrame", "CountsBatchFrame", "GapFrame", "EndFrame"],
        "close_codes": {
            "1000": "the stream ended (after an EndFrame)",
            "1008": "no or unknown bearer token, or an Origin not allowed",
            "4404": "no such query, or it is being deleted",
        },
    },
}

DESCRIPTION = """\
Every error body is an `ErrorEnvelope`: `{"error": {"code", "status", "message", "details":
[{"field", "reason"}]}}`.

**Websockets** (OpenAPI has no way to describe them; the `x-websockets` extension lists them
with their parameters, frame schemas and close codes). Each text frame is one JSON object:

* `WS /api/v1/queries/{name}/matches`: `DeltaFrame` per match delta (`?encoding=batch`:
  `DeltasBatchFrame` per engine batch);
* `WS /api/v1/queries/{name}/counts`: `CountFrame` per update and sign (`?encoding=batch`:
  `CountsBatchFrame`);
* both: `GapFrame` where a slow subscriber lost frames, `EndFrame` before the close.

The same delta and count frames are the values of the `dcsm.matches` topic.
"""


def install_openapi(app: FastAPI) -> None:
    """Generate ``app``'s document once, with the frames, websockets and bearer scheme."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=DESCRIPTION,
            routes=app.routes,
        )
        components = doc.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        for model in FRAMES:
            js = model.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, sub in js.pop("$defs", {}).items():
                schemas.setdefault(name, sub)
            schemas[model.__name__] = js
        # FastAPI adds its own 422 to every route with parameters; the routes that can
        # answer 422 list the envelope instead, so what is left is a status they never send.
        # Errors are JSON whatever the route's own media type (/metrics is text/plain).
        envelope = {"$ref": "#/components/schemas/ErrorEnvelope"}
        for ops in doc.get("paths", {}).values():
            for op in ops.values():
                responses = op.get("responses", {})
                if "HTTPValidationError" in str(responses.get("422", {})):
                    del responses["422"]
                for answer in responses.values():
                    if "ErrorEnvelope" in str(answer.get("content", {})):
                        answer["content"] = {"application/json": {"schema": envelope}}
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        components["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer", "description": "a read or write "
                       "token, when the service has tokens configured"}
        }  # fmt: skip
        doc["x-websockets"] = WEBSOCKETS
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
