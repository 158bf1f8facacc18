"""The client's types: what its calls return and its subscriptions yield, and :class:`ApiError`.

Plain frozen dataclasses with no I/O, shared by :mod:`dcsm.client.http`,
:mod:`dcsm.client.subscription` and :mod:`dcsm.client.kafka`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

import numpy as np

from dcsm.errors import DcsmError

if TYPE_CHECKING:
    import httpx

    from dcsm.model import Pattern, UpdateBatch
    from dcsm.schemas import EdgeUpdate, QuerySpec

Mode = Literal["embeddings", "count"]
FrameEncoding = Literal["json", "batch"]
RecordEncoding = Literal["binary", "json"]
QueryLike: TypeAlias = "QuerySpec | Pattern | Mapping[str, Any]"
UpdatesLike: TypeAlias = "UpdateBatch | Sequence[EdgeUpdate | Mapping[str, Any]]"

# -- errors ---------------------------------------------------------------------------------


class ApiError(DcsmError):
    """The service answered with its error envelope (or closed a websocket with an error
    code): ``status`` (HTTP status), ``code`` (``not_found``, ``already_exists``,
    ``invalid_argument``, ...), ``message``, and ``details`` (``[{"field", "reason"}]``)."""

    def __init__(
        self, status: int, code: str, message: str, details: list[dict[str, str]] | None = None
    ) -> None:
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
        super().__init__(f"{status} {code}: {message}")

    @staticmethod
    def from_response(r: httpx.Response) -> ApiError:
        try:
            body = r.json()
            err = body["error"]
            return ApiError(
                int(err.get("status", r.status_code)),
                str(err.get("code", "error")),
                str(err.get("message", "")),
                list(err.get("details") or []),
            )
        except (ValueError, KeyError, TypeError):
            return ApiError(r.status_code, "error", r.text[:500] or r.reason_phrase)


# -- HTTP results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A registered query as the API describes it. ``spec`` is the QuerySpec body; ``stats``
    and ``subscribers`` come with :meth:`Client.get_query` and :meth:`Client.delete_query`
    (the final stats), ``backfill`` (matches reported at registration) with
    ``register_query(backfill=True)``; ``replica`` is the replica that matches it (None
    without replicas), ``pinned`` whether the registration chose it; ``backfill_progress``
    the share of the graph's vertices a backfill running beside the stream has done (state
    ``backfilling``), else None."""

    name: str
    mode: Mode
    encoding: FrameEncoding
    from_seq: int
    state: str
    spec: dict[str, Any]
    created_at: float
    stats: dict[str, Any] | None = None
    subscribers: int | None = None
    backfill: int | None = None
    replica: int | None = None
    pinned: bool = False
    backfill_progress: float | None = None

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> Query:
        return Query(
            name=body["name"],
            mode=body["mode"],
            encoding=body.get("encoding", "json"),
            from_seq=int(body["from_seq"]),
            state=body.get("state", "live"),
            spec=body.get("query", {}),
            created_at=float(body.get("created_at", 0.0)),
            stats=body.get("stats"),
            subscribers=body.get("subscribers"),
            backfill=body.get("backfill"),
            replica=body.get("replica"),
            pinned=bool(body.get("pinned", False)),
            backfill_progress=body.get("backfill_progress"),
        )


@dataclass(frozen=True)
class QueryPage:
    """One page of :meth:`Client.list_queries`; ``next_page_token`` None on the last."""

    items: list[Query]
    next_page_token: str | None


@dataclass(frozen=True)
class UpdatesResult:
    """What ``POST /api/v1/updates`` answered: ``accepted`` updates with seqs ``first_seq``
    to ``last_seq``. Once applied (``wait=True``): ``outcomes`` (``{"applied": n, "noop": m,
    ...}``) and ``rejected`` (``[{"index", "seq", "reason"}]``); with ``wait=False`` both are
    None (the service answered 202 once the updates were durable)."""

    accepted: int
    first_seq: int | None
    last_seq: int | None
    outcomes: dict[str, int] | None
    rejected: list[dict[str, Any]] | None
    durable: Any = None

    @property
    def applied(self) -> bool:
        return self.outcomes is not None

    @staticmethod
    def from_json(body: Mapping[str, Any]) -> UpdatesResult:
        return UpdatesResult(
            accepted=int(body["accepted"]),
            first_seq=body.get("first_seq"),
            last_seq=body.get("last_seq"),
            outcomes=body.get("outcomes"),
            rejected=body.get("rejected"),
            durable=body.get("durable"),
        )


@dataclass(frozen=True)
class Status:
    """``GET /api/v1/status``: ``processed_seq`` is the last seq whose frames are out (-1
    before any); ``raw`` the whole body (engine, Kafka, checkpoint details)."""

    version: str | None
    next_seq: int
    processed_seq: int
    queued_updates: int
    queries: int
    backend: str | None
    kafka_bootstrap: str | None
    uptime_seconds: float
    raw: dict[str, Any] = field(repr=False)

    @staticmethod
    def from_json(body: dict[str, Any]) -> Status:
        return Status(
            version=body.get("version"),
            next_seq=int(body["next_seq"]),
            processed_seq=int(body["processed_seq"]),
            queued_updates=int(body.get("queued_updates", 0)),
            queries=int(body.get("queries", 0)),
            backend=(body.get("engine") or {}).get("backend"),
            kafka_bootstrap=(body.get("kafka") or {}).get("bootstrap"),
            uptime_seconds=float(body.get("uptime_seconds", 0.0)),
            raw=body,
        )


# -- websocket items ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delta:
    """A match created (``sign`` +1) or destroyed (-1) by update ``seq``: ``match`` lists data
    vertex ids in pattern-vertex order. ``id``: the stable 16-hex-digit id; ``arrival_ts``:
    the update's arrival (its producer ``ts``); ``emitted_ts``: when the service sent it;
    ``received_at``: when this client read its frame (epoch seconds, all three)."""

    query: str
    sign: int
    seq: int
    match: tuple[int, ...]
    id: str
    arrival_ts: float
    emitted_ts: float
    received_at: float
    backfill: bool = False


@dataclass(frozen=True, slots=True)
class Count:
    """A count-mode row: update ``seq`` created (``sign`` +1) or destroyed (-1) ``count``
    matches. Other fields as :class:`Delta`'s."""

    query: str
    sign: int
    seq: int
    count: int
    id: str
    arrival_ts: float
    emitted_ts: float
    received_at: float
    backfill: bool = False


@dataclass(frozen=True, slots=True)
class Gap:
    """The service dropped ``dropped`` frames for this client (it fell behind its queue
    bound); the rows in them are lost to this subscription."""

    dropped: int


@dataclass(frozen=True, slots=True)
class End:
    """The query was deleted (``reason``); nothing follows."""

    reason: str


@dataclass(frozen=True)
class DeltaBatch:
    """A frame's deltas as columns: ``seq`` int64 (k,), ``sign`` int8 (k,), ``match`` int64
    (k, n), ``ids`` uint64 (k,), ``arrival_ts`` float64 (k,)."""

    query: str
    seq: np.ndarray
    sign: np.ndarray
    match: np.ndarray
    ids: np.ndarray
    arrival_ts: np.ndarray
    emitted_ts: float
    received_at: float
    backfill: bool = False

    def __len__(self) -> int:
        return len(self.seq)

    def rows(self) -> Iterator[Delta]:
        for s, q, m, i, a in _columns(self, self.match.tolist()):
            yield Delta(
                self.query, s, q, tuple(m), i, a, self.emitted_ts, self.received_at, self.backfill
            )

    def take(self, keep: np.ndarray) -> DeltaBatch:
        return _take(self, keep, "seq", "sign", "match", "ids", "arrival_ts")


@dataclass(frozen=True)
class CountBatch:
    """A frame's counts as columns: ``seq`` int64 (k,), ``sign`` int8 (k,), ``count`` int64
    (k,), ``ids`` uint64 (k,), ``arrival_ts`` float64 (k,)."""

    query: str
    seq: np.ndarray
    sign: np.ndarray
    count: np.ndarray
    ids: np.ndarray
    arrival_ts: np.ndarray
    emitted_ts: float
    received_at: float
    backfill: bool = False

    def __len__(self) -> int:
        return len(self.seq)

    def rows(self) -> Iterator[Count]:
        for s, q, c, i, a in _columns(self, self.count.tolist()):
            yield Count(self.query, s, q, c, i, a, self.emitted_ts, self.received_at, self.backfill)

    def take(self, keep: np.ndarray) -> CountBatch:
        return _take(self, keep, "seq", "sign", "count", "ids", "arrival_ts")


_Batch = TypeVar("_Batch", DeltaBatch, CountBatch)


def _columns(batch: DeltaBatch | CountBatch, values: list[Any]) -> Iterator[tuple[Any, ...]]:
    """(sign, seq, value, id, arrival_ts) of each row as Python values; ``values`` is the
    batch's own column (matches or counts) as a list."""
    return zip(
        batch.sign.tolist(), batch.seq.tolist(), values, _hex(batch.ids),
        batch.arrival_ts.tolist(), strict=True,
    )  # fmt: skip


def _take(batch: _Batch, keep: np.ndarray, *columns: str) -> _Batch:
    """``batch`` with only the rows ``keep`` (bool (k,)) selects in its ``columns``."""
    return replace(batch, **{c: getattr(batch, c)[keep] for c in columns})


Row: TypeAlias = Delta | Count
Item: TypeAlias = Delta | Count | Gap | End
BatchItem: TypeAlias = DeltaBatch | CountBatch | Gap | End


def _hex(ids: np.ndarray) -> list[str]:
    text = ids.astype(">u8").tobytes().hex()
    return [text[i : i + 16] for i in range(0, len(text), 16)]
