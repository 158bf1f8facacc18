"""Wire shapes the HTTP API documents but does not parse: its error envelope, the bodies of
its non-JSON-schema answers, and the websocket / ``dcsm.matches`` frames.

They exist so ``/openapi.json`` says what the service really sends (``service/openapi.py``
puts them in every route's ``responses`` and in ``components``); the service itself writes
these bodies directly (``service/api.py``, ``service/frames.py``), and a test checks every
answer against them (``tests/service/test_openapi.py``).

Example error body::

    {"error": {"code": "invalid_argument", "status": 422,
               "message": "invalid request: body: line 1, column 13: Expecting value",
               "details": [{"field": "body", "reason": "line 1, column 13: Expecting value"}]}}
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .deltas import MatchDelta


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str = Field(description="what is wrong, as a path: edges[0].u, body, pageToken")
    reason: str


class Error(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str = Field(
        description="stable: invalid_argument, unauthenticated, permission_denied, not_found, "
        "already_exists, payload_too_large, unavailable, idempotency_key_reused, "
        "idempotency_key_in_progress, method_not_allowed"
    )
    status: int = Field(description="the HTTP status, repeated")
    message: str = Field(description="one line for people")
    details: list[ErrorDetail]


class ErrorEnvelope(BaseModel):
    """Every error the API answers (4xx, 5xx)."""

    model_config = ConfigDict(extra="forbid")

    error: Error


class Readiness(BaseModel):
    """``GET /readyz``: 200 when every check holds, 503 otherwise."""

    model_config = ConfigDict(extra="forbid")

    ready: bool
    checks: dict[str, bool] = Field(description="engine, pipeline, and kafka when configured")
    error: str | None = Field(default=None, description="why the service stopped, if it did")
    replica: dict[str, object] | None = Field(
        default=None, description="with replicas: this one's index, replicas and shard mode"
    )
    lag: float | None = Field(
        default=None, description="with Kafka: input records not yet read (dcsm_consumer_lag)"
    )


class UpdatesAccepted(BaseModel):
    """``POST /api/v1/updates?wait=false``: 202 once the updates are durable."""

    model_config = ConfigDict(extra="forbid")

    accepted: int
    first_seq: int | None
    last_seq: int | None
    durable: dict[str, object] | None = Field(description="where they are durable")


class Rejected(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="position in the request")
    seq: int
    reason: str = Field(description="label_conflict, ...")


class UpdatesApplied(BaseModel):
    """``POST /api/v1/updates``: 200 once the updates are applied."""

    model_config = ConfigDict(extra="forbid")

    accepted: int
    first_seq: int | None
    last_seq: int | None
    durable: dict[str, object] | None = None
    outcomes: dict[str, int] = Field(description="updates per outcome (applied, noop, ...)")
    rejected: list[Rejected]


# -- frames (websocket text frames, dcsm.matches values) ------------------------------------


class DeltaFrame(MatchDelta):
    """``json`` encoding: one match delta (``+1`` appeared, ``-1`` disappeared)."""

    id: str = Field(description="16 hex digits, stable across replays: deduplicate by it")


class CountFrame(BaseModel):
    """``json`` encoding, count queries: the signed number of matches one update made."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["count"]
    query: str
    sign: Literal[1, -1]
    seq: int = Field(ge=0)
    count: int = Field(ge=1)
    backfill: bool | None = None
    arrival_ts: float
    emitted_ts: float
    id: str


class DeltasBatchFrame(BaseModel):
    """``batch`` encoding: every delta of one engine batch as parallel arrays."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["deltas"]
    query: str
    seq: list[int]
    sign: list[Literal[1, -1]]
    match: list[list[int]]
    ids: str = Field(description="16 hex digits per row, concatenated")
    arrival_ts: list[float]
    emitted_ts: float
    backfill: bool | None = None


class CountsBatchFrame(BaseModel):
    """``batch`` encoding, count queries: every count of one engine batch."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["counts"]
    query: str
    seq: list[int]
    sign: list[Literal[1, -1]]
    count: list[int]
    ids: str
    arrival_ts: list[float]
    emitted_ts: float
    backfill: bool | None = None


class GapFrame(BaseModel):
    """This subscriber fell behind its queue bound; ``dropped`` frames were skipped."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["gap"]
    dropped: int = Field(ge=1)


class EndFrame(BaseModel):
    """The stream ends (the query was deleted, or the service stops); then close 1000."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["end"]
    reason: str


FRAMES: tuple[type[BaseModel], ...] = (
    DeltaFrame, CountFrame, DeltasBatchFrame, CountsBatchFrame, GapFrame, EndFrame,
)  # fmt: skip
