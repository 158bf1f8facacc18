"""A typed client for the dcsm service: HTTP calls, websocket subscriptions, Kafka input.

Three pieces, one per way of talking to the service:

* :class:`Client` (blocking) and :class:`AsyncClient` (asyncio): one method per HTTP route
  (register, list, get and delete queries; post updates; status, health, readiness,
  metrics), over httpx. A response in the API's error envelope
  (``{"error": {"code", "status", "message", "details"}}``) raises :class:`ApiError`.
* :meth:`AsyncClient.subscribe`: a query's websocket as an async iterator of typed rows,
  :class:`Delta` or :class:`Count`, with :class:`Gap` (this client fell behind and the service
  dropped frames) and :class:`End` (the query was deleted) as items of their own. Frames of
  both encodings (``json``: a frame per row; ``batch``: a frame per engine batch) give the
  same rows. Rows are deduplicated by their stable 64-bit id, so a subscription that
  reconnects after a service restart, which replays the frames since the last checkpoint
  with the same ids, yields each row once. :meth:`Subscription.batches` gives whole batches
  as numpy columns instead (no Python work per row; what ``dcsm loadgen`` reads).
* :class:`UpdateProducer`: updates into the service's Kafka input topic as the records it
  decodes, a binary batch or a JSON array per record (the encoders are
  :mod:`dcsm.service.codec`'s, the ones the service's own tests, demo and load generator use).

Example (blocking)::

    from dcsm.client import Client

    with Client("http://127.0.0.1:8000") as c:
        c.register_query({"name": "tri", "vertices": [{"id": 0}, {"id": 1}, {"id": 2}],
                          "edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2}, {"u": 0, "v": 2}]})
        c.post_updates([{"op": "insert", "u": 1, "v": 2}, {"op": "insert", "u": 2, "v": 3},
                        {"op": "insert", "u": 1, "v": 3}])
        print(c.get_query("tri").stats)

Example (asyncio)::

    async with AsyncClient("http://127.0.0.1:8000") as c:
        async for item in c.subscribe("tri"):
            if isinstance(item, Delta):
                print(item.sign, item.seq, item.match)
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import httpx
import numpy as np
import orjson

from dcsm.errors import DcsmError

if TYPE_CHECKING:
    from dcsm.model import Pattern, UpdateBatch
    from dcsm.schemas import EdgeUpdate, QuerySpec

__all__ = [
    "PRODUCER_OPTIONS",
    "ApiError",
    "AsyncClient",
    "Client",
    "Count",
    "CountBatch",
    "Delta",
    "DeltaBatch",
    "End",
    "Gap",
    "Query",
    "QueryPage",
    "Status",
    "Subscription",
    "UpdateProducer",
    "UpdatesResult",
    "encode_record",
    "parse_frame",
]

Mode = Literal["embeddings", "count"]
FrameEncoding = Literal["json", "batch"]
RecordEncoding = Literal["binary", "json"]
QueryLike: TypeAlias = "QuerySpec | Pattern | Mapping[str, Any]"
UpdatesLike: TypeAlias = "UpdateBatch | Sequence[EdgeUpdate | Mapping[str, Any]]"

#: AIOKafkaProducer options :class:`UpdateProducer` starts from: no linger (a record is already
#: a batch of updates), records and batches large enough for 10,000-update binary records.
PRODUCER_OPTIONS: dict[str, Any] = {
    "linger_ms": 0,
    "max_request_size": 16 * 1024 * 1024,
    "max_batch_size": 1024 * 1024,
}

#: Websocket close codes the service uses (see ``service/api.py``).
WS_CLOSE_NOT_FOUND = 4404
WS_CLOSE_WRONG_KIND = 4409
WS_CLOSE_POLICY = 1008  # no or a wrong token


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


def _checked(r: httpx.Response) -> Any:
    if r.status_code >= 400:
        raise ApiError.from_response(r)
    return r.json()


# -- HTTP results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Query:
    """A registered query as the API describes it. ``spec`` is the QuerySpec body; ``stats``
    and ``subscribers`` come with :meth:`Client.get_query` and :meth:`Client.delete_query`
    (the final stats), ``backfill`` (matches reported at registration) with
    ``register_query(backfill=True)``."""

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


# -- request bodies (shared by both clients) ------------------------------------------------


def _query_body(query: QueryLike, mode: Mode | None, encoding: FrameEncoding | None) -> Any:
    from dcsm.model import Pattern
    from dcsm.schemas import QuerySpec

    if isinstance(query, Pattern):
        body: dict[str, Any] = QuerySpec.from_pattern(query).model_dump()
    elif isinstance(query, QuerySpec):
        body = query.model_dump()
    else:
        body = dict(query)
    if mode is not None:
        body["mode"] = mode
    if encoding is not None:
        body["encoding"] = encoding
    return body


def _updates_body(updates: UpdatesLike) -> list[Any]:
    from dcsm.model import UpdateBatch
    from dcsm.schemas import EdgeUpdate

    if isinstance(updates, UpdateBatch):
        from dcsm.service.codec import encode_json_updates

        return encode_json_updates(updates)
    return [
        u.model_dump(exclude_none=True) if isinstance(u, EdgeUpdate) else dict(u) for u in updates
    ]


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _ws_base(base_url: str) -> str:
    url = httpx.URL(base_url)
    scheme = "wss" if url.scheme == "https" else "ws"
    return str(url.copy_with(scheme=scheme)).rstrip("/")


# -- blocking client ------------------------------------------------------------------------


class Client:
    """Blocking HTTP client (``with Client(url) as c: ...``). ``token``: sent as
    ``Authorization: Bearer <token>`` (a service with access tokens configured);
    ``trust_env=False`` (default) ignores proxy variables, right for a service on loopback;
    ``http``: an httpx.Client of your own instead (base URL and headers included)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        timeout_s: float = 30.0,
        trust_env: bool = False,
        token: str | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = http or httpx.Client(
            base_url=self.base_url, timeout=timeout_s, trust_env=trust_env, headers=_auth(token)
        )

    def register_query(
        self,
        query: QueryLike,
        *,
        mode: Mode | None = None,
        encoding: FrameEncoding | None = None,
        backfill: bool = False,
    ) -> Query:
        """Register ``query`` (a QuerySpec, a Pattern or a QuerySpec-shaped dict); it sees
        every update from the returned ``from_seq`` on. ``mode``: ``embeddings`` (every
        delta) or ``count``; ``encoding``: its frames on the matches topic; ``backfill``:
        first report the matches already in the graph. 409 ``already_exists`` if the name is
        taken."""
        params = {"backfill": "true"} if backfill else None
        r = self.http.post(
            "/api/v1/queries", json=_query_body(query, mode, encoding), params=params
        )
        return Query.from_json(_checked(r))

    def list_queries(self, page_size: int = 100, page_token: str | None = None) -> QueryPage:
        params: dict[str, Any] = {"pageSize": page_size}
        if page_token:
            params["pageToken"] = page_token
        body = _checked(self.http.get("/api/v1/queries", params=params))
        return QueryPage([Query.from_json(q) for q in body["items"]], body.get("nextPageToken"))

    def iter_queries(self, page_size: int = 100) -> Iterator[Query]:
        """Every registered query, page by page."""
        token: str | None = None
        while True:
            page = self.list_queries(page_size, token)
            yield from page.items
            if not page.next_page_token:
                return
            token = page.next_page_token

    def get_query(self, name: str) -> Query:
        return Query.from_json(_checked(self.http.get(f"/api/v1/queries/{name}")))

    def delete_query(self, name: str) -> Query:
        """Unregister; the query with its final stats."""
        return Query.from_json(_checked(self.http.delete(f"/api/v1/queries/{name}")))

    def post_updates(self, updates: UpdatesLike, *, wait: bool = True) -> UpdatesResult:
        """Send updates (an UpdateBatch, EdgeUpdates or EdgeUpdate-shaped dicts) through the
        service's one sequence; ``wait=False`` returns once they are durable."""
        params = None if wait else {"wait": "false"}
        r = self.http.post("/api/v1/updates", json=_updates_body(updates), params=params)
        return UpdatesResult.from_json(_checked(r))

    def status(self) -> Status:
        return Status.from_json(_checked(self.http.get("/api/v1/status")))

    def health(self) -> bool:
        """``/healthz``: the process answers."""
        try:
            return self.http.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def ready(self) -> bool:
        """``/readyz``: the engine is warm and the pipeline (and Kafka, if used) is up."""
        try:
            return self.http.get("/readyz").status_code == 200
        except httpx.TransportError:
            return False

    def metrics(self) -> str:
        """``/metrics`` (Prometheus text)."""
        r = self.http.get("/metrics")
        if r.status_code >= 400:
            raise ApiError.from_response(r)
        return r.text

    def wait_ready(self, timeout_s: float = 120.0) -> None:
        """Poll ``/readyz`` until ready; TimeoutError after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not self.ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.base_url} not ready within {timeout_s:g} s")
            time.sleep(0.1)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- asyncio client -------------------------------------------------------------------------


class AsyncClient:
    """The asyncio twin of :class:`Client`, plus :meth:`subscribe`
    (``async with AsyncClient(url) as c: ...``)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        timeout_s: float = 30.0,
        trust_env: bool = False,
        token: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.ws_url = _ws_base(self.base_url)
        self.ws_headers = _auth(token)
        self.http = http or httpx.AsyncClient(
            base_url=self.base_url, timeout=timeout_s, trust_env=trust_env, headers=_auth(token)
        )

    async def register_query(
        self,
        query: QueryLike,
        *,
        mode: Mode | None = None,
        encoding: FrameEncoding | None = None,
        backfill: bool = False,
    ) -> Query:
        """See :meth:`Client.register_query`."""
        params = {"backfill": "true"} if backfill else None
        r = await self.http.post(
            "/api/v1/queries", json=_query_body(query, mode, encoding), params=params
        )
        return Query.from_json(_checked(r))

    async def list_queries(self, page_size: int = 100, page_token: str | None = None) -> QueryPage:
        params: dict[str, Any] = {"pageSize": page_size}
        if page_token:
            params["pageToken"] = page_token
        body = _checked(await self.http.get("/api/v1/queries", params=params))
        return QueryPage([Query.from_json(q) for q in body["items"]], body.get("nextPageToken"))

    async def iter_queries(self, page_size: int = 100) -> AsyncIterator[Query]:
        token: str | None = None
        while True:
            page = await self.list_queries(page_size, token)
            for q in page.items:
                yield q
            if not page.next_page_token:
                return
            token = page.next_page_token

    async def get_query(self, name: str) -> Query:
        return Query.from_json(_checked(await self.http.get(f"/api/v1/queries/{name}")))

    async def delete_query(self, name: str) -> Query:
        return Query.from_json(_checked(await self.http.delete(f"/api/v1/queries/{name}")))

    async def post_updates(self, updates: UpdatesLike, *, wait: bool = True) -> UpdatesResult:
        """See :meth:`Client.post_updates`."""
        params = None if wait else {"wait": "false"}
        r = await self.http.post("/api/v1/updates", json=_updates_body(updates), params=params)
        return UpdatesResult.from_json(_checked(r))

    async def status(self) -> Status:
        return Status.from_json(_checked(await self.http.get("/api/v1/status")))

    async def health(self) -> bool:
        try:
            return (await self.http.get("/healthz")).status_code == 200
        except httpx.TransportError:
            return False

    async def ready(self) -> bool:
        try:
            return (await self.http.get("/readyz")).status_code == 200
        except httpx.TransportError:
            return False

    async def metrics(self) -> str:
        r = await self.http.get("/metrics")
        if r.status_code >= 400:
            raise ApiError.from_response(r)
        return r.text

    async def wait_ready(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not await self.ready():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.base_url} not ready within {timeout_s:g} s")
            await asyncio.sleep(0.1)

    def subscribe(
        self,
        name: str,
        *,
        counts: bool | None = None,
        encoding: FrameEncoding | None = None,
        dedupe: bool = True,
        reconnect: bool = True,
        reconnect_timeout_s: float = 60.0,
        queue_frames: int | None = None,
    ) -> Subscription:
        """Query ``name``'s websocket (see :class:`Subscription`). ``counts``: the per-update
        count stream (``/counts``) instead of the deltas (``/matches``); None (default): the
        one of the query's mode, asked of the service on connecting. ``encoding``: the frames
        on the wire (rows come out the same); None (default): the query's own, which is what
        lets the first subscriber get every frame since registration (the service keeps
        them for a subscriber of the query's kind and encoding). ``reconnect``: reconnect
        when the connection drops (a service restart) for up to ``reconnect_timeout_s``;
        ``queue_frames``: the service-side frame bound for this client (beyond it, a
        :class:`Gap`)."""
        return Subscription(
            self,
            name,
            counts=counts,
            encoding=encoding,
            dedupe=dedupe,
            reconnect=reconnect,
            reconnect_timeout_s=reconnect_timeout_s,
            queue_frames=queue_frames,
        )

    async def close(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


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
        for s, q, m, i, a in zip(
            self.sign.tolist(),
            self.seq.tolist(),
            self.match.tolist(),
            _hex(self.ids),
            self.arrival_ts.tolist(),
            strict=True,
        ):
            yield Delta(
                self.query, s, q, tuple(m), i, a, self.emitted_ts, self.received_at, self.backfill
            )

    def take(self, keep: np.ndarray) -> DeltaBatch:
        return DeltaBatch(
            self.query,
            self.seq[keep],
            self.sign[keep],
            self.match[keep],
            self.ids[keep],
            self.arrival_ts[keep],
            self.emitted_ts,
            self.received_at,
            self.backfill,
        )


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
        for s, q, c, i, a in zip(
            self.sign.tolist(),
            self.seq.tolist(),
            self.count.tolist(),
            _hex(self.ids),
            self.arrival_ts.tolist(),
            strict=True,
        ):
            yield Count(self.query, s, q, c, i, a, self.emitted_ts, self.received_at, self.backfill)

    def take(self, keep: np.ndarray) -> CountBatch:
        return CountBatch(
            self.query,
            self.seq[keep],
            self.sign[keep],
            self.count[keep],
            self.ids[keep],
            self.arrival_ts[keep],
            self.emitted_ts,
            self.received_at,
            self.backfill,
        )


Row: TypeAlias = Delta | Count
Item: TypeAlias = Delta | Count | Gap | End
BatchItem: TypeAlias = DeltaBatch | CountBatch | Gap | End


def _ids(text: str) -> np.ndarray:
    """The batch encoding's ``ids`` (16 hex digits per row) as uint64 (k,)."""
    return np.frombuffer(bytes.fromhex(text), ">u8").astype(np.uint64)


def _hex(ids: np.ndarray) -> list[str]:
    text = ids.astype(">u8").tobytes().hex()
    return [text[i : i + 16] for i in range(0, len(text), 16)]


def parse_frame(
    text: str | bytes, received_at: float
) -> Row | DeltaBatch | CountBatch | Gap | End | None:
    """One websocket frame (either encoding) as an item; None for a frame type this client
    does not know (a newer service's)."""
    f: dict[str, Any] = orjson.loads(text)
    kind = f.get("type")
    backfill = bool(f.get("backfill", False))
    if kind is None:
        return Delta(
            f["query"],
            int(f["sign"]),
            int(f["seq"]),
            tuple(f["match"]),
            f["id"],
            float(f["arrival_ts"]),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "count":
        return Count(
            f["query"],
            int(f["sign"]),
            int(f["seq"]),
            int(f["count"]),
            f["id"],
            float(f["arrival_ts"]),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "deltas":
        seq = np.asarray(f["seq"], np.int64)
        match = np.asarray(f["match"], np.int64).reshape(len(seq), -1)
        return DeltaBatch(
            f["query"],
            seq,
            np.asarray(f["sign"], np.int8),
            match,
            _ids(f["ids"]),
            np.asarray(f["arrival_ts"], np.float64),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "counts":
        return CountBatch(
            f["query"],
            np.asarray(f["seq"], np.int64),
            np.asarray(f["sign"], np.int8),
            np.asarray(f["count"], np.int64),
            _ids(f["ids"]),
            np.asarray(f["arrival_ts"], np.float64),
            float(f["emitted_ts"]),
            received_at,
            backfill,
        )
    if kind == "gap":
        return Gap(int(f.get("dropped", 0)))
    if kind == "end":
        return End(str(f.get("reason", "")))
    return None


def _as_batch(row: Row) -> DeltaBatch | CountBatch:
    seq = np.array([row.seq], np.int64)
    sign = np.array([row.sign], np.int8)
    ids = _ids(row.id)
    arrival = np.array([row.arrival_ts], np.float64)
    if isinstance(row, Delta):
        match = np.array([row.match], np.int64)
        return DeltaBatch(
            row.query, seq, sign, match, ids, arrival, row.emitted_ts, row.received_at, row.backfill
        )
    return CountBatch(
        row.query,
        seq,
        sign,
        np.array([row.count], np.int64),
        ids,
        arrival,
        row.emitted_ts,
        row.received_at,
        row.backfill,
    )


class _Seen:
    """The ids of the last ``window`` rows (a set plus their order, oldest evicted first)."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.ids: set[int] = set()
        self.order: deque[int] = deque()

    def first_time(self, ids: list[int]) -> list[bool]:
        out = []
        seen, order = self.ids, self.order
        for i in ids:
            new = i not in seen
            out.append(new)
            if new:
                seen.add(i)
                order.append(i)
        while len(order) > self.window:
            seen.discard(order.popleft())
        return out


class Subscription:
    """A query's websocket as an async iterator.

    ``async for item in sub`` yields :class:`Delta` or :class:`Count` rows, :class:`Gap`
    and :class:`End` (the last item); :meth:`batches` yields whole frames as
    :class:`DeltaBatch` / :class:`CountBatch` columns instead. Each row comes once
    (``dedupe``: by id, over the last ``dedupe_window`` rows); ``duplicates`` counts those
    dropped, ``reconnects`` the reconnections. Use one iterator per subscription;
    ``close()`` (or leaving ``async with``) ends it."""

    def __init__(
        self,
        client: AsyncClient,
        name: str,
        *,
        counts: bool | None,
        encoding: FrameEncoding | None,
        dedupe: bool,
        reconnect: bool,
        reconnect_timeout_s: float,
        queue_frames: int | None,
        dedupe_window: int = 1_000_000,
    ) -> None:
        self.client = client
        self.name = name
        self.counts = counts
        self.encoding = encoding
        self.reconnect = reconnect
        self.reconnect_timeout_s = reconnect_timeout_s
        self.queue_frames = queue_frames
        self._seen = _Seen(dedupe_window) if dedupe else None
        self.duplicates = 0
        self.reconnects = 0
        self._ws: Any = None
        self._closed = False
        self._open = asyncio.Event()

    async def _url(self) -> str:
        if self.counts is None or self.encoding is None:
            q = await self.client.get_query(self.name)
            self.counts = q.mode == "count" if self.counts is None else self.counts
            self.encoding = self.encoding or q.encoding
        kind = "counts" if self.counts else "matches"
        params = [f"encoding={self.encoding}"]
        if self.queue_frames:
            params.append(f"queue={self.queue_frames}")
        return f"{self.client.ws_url}/api/v1/queries/{self.name}/{kind}?{'&'.join(params)}"

    async def _frames(self) -> AsyncIterator[tuple[str | bytes, float]]:
        """Raw frames with their receive times, across reconnections, until the end frame
        (or a close without one, when not reconnecting)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidHandshake

        url = await self._url()
        down_since: float | None = None
        while not self._closed:
            try:
                async with connect(
                    url,
                    proxy=None,
                    compression=None,
                    max_size=None,
                    open_timeout=10,
                    additional_headers=self.client.ws_headers,
                ) as ws:
                    self._ws = ws
                    self._open.set()
                    if down_since is not None:
                        self.reconnects += 1
                    down_since = None
                    async for text in ws:
                        yield text, time.time()
                        if self._closed:
                            return
                    _raise_close(ws.close_code, ws.close_reason or "", self.name)
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                _raise_close(code, exc.rcvd.reason if exc.rcvd else "", self.name)
            except (OSError, InvalidHandshake, TimeoutError):
                if not self.reconnect:
                    raise
            finally:
                self._ws = None
                self._open.clear()
            if not self.reconnect or self._closed:
                return
            now = time.monotonic()
            down_since = down_since or now
            if now - down_since > self.reconnect_timeout_s:
                raise ConnectionError(
                    f"websocket of query {self.name!r}: no connection for "
                    f"{self.reconnect_timeout_s:g} s"
                )
            await asyncio.sleep(0.2)

    async def wait_open(self, timeout_s: float = 30.0) -> None:
        """Wait until the websocket is open (an iterator of this subscription must be
        running); what the service emits from then on reaches it."""
        await asyncio.wait_for(self._open.wait(), timeout_s)

    async def batches(self) -> AsyncIterator[BatchItem]:
        """Whole frames as columns (a json-encoded row comes as a batch of one)."""
        async for text, received_at in self._frames():
            item = parse_frame(text, received_at)
            if item is None:
                continue
            if isinstance(item, Delta | Count):
                item = _as_batch(item)
            if isinstance(item, DeltaBatch | CountBatch) and self._seen is not None:
                keep = np.asarray(self._seen.first_time(item.ids.tolist()), bool)
                if not keep.all():
                    self.duplicates += int((~keep).sum())
                    if not keep.any():
                        continue
                    item = item.take(keep)
            yield item
            if isinstance(item, End):
                return

    async def _rows(self) -> AsyncIterator[Item]:
        seen = self._seen
        async for text, received_at in self._frames():
            item = parse_frame(text, received_at)
            if item is None:
                continue
            rows: Iterator[Item]
            if isinstance(item, DeltaBatch | CountBatch):
                rows = item.rows()
            else:
                rows = iter((item,))
            for row in rows:
                if seen is not None and isinstance(row, Delta | Count):
                    if not seen.first_time([int(row.id, 16)])[0]:
                        self.duplicates += 1
                        continue
                yield row
            if isinstance(item, End):
                return

    def __aiter__(self) -> AsyncIterator[Item]:
        return self._rows()

    async def close(self) -> None:
        self._closed = True
        if self._ws is not None:
            await self._ws.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _raise_close(code: int | None, reason: str, name: str) -> None:
    if code == WS_CLOSE_NOT_FOUND:
        raise ApiError(404, "not_found", reason or f"query {name!r} not found")
    if code == WS_CLOSE_WRONG_KIND:
        raise ApiError(409, "wrong_kind", reason or f"query {name!r}: wrong stream")
    if code == WS_CLOSE_POLICY:
        raise ApiError(401, "unauthenticated", reason or "the service refused the token")


# -- Kafka input ----------------------------------------------------------------------------


def encode_record(
    updates: UpdatesLike, encoding: RecordEncoding = "binary", ts: np.ndarray | None = None
) -> bytes:
    """One input record of ``updates`` in ``encoding`` (``binary``: a binary batch; ``json``:
    a JSON array of EdgeUpdate objects), exactly what the service's ingest decodes. ``ts``:
    float64 (n,) producer times (epoch seconds; the service reports them as ``arrival_ts``)."""
    from dcsm.service.codec import encode_binary, encode_json

    batch = _as_update_batch(updates)
    if encoding == "binary":
        return encode_binary(batch, ts)
    if encoding == "json":
        return encode_json(batch, ts)
    raise ValueError(f"encoding must be binary or json, got {encoding!r}")


def _as_update_batch(updates: UpdatesLike) -> UpdateBatch:
    from dcsm.model import UpdateBatch
    from dcsm.schemas import EdgeUpdate, to_batch

    if isinstance(updates, UpdateBatch):
        return updates
    models = [u if isinstance(u, EdgeUpdate) else EdgeUpdate.model_validate(u) for u in updates]
    return to_batch(models, 0, np.array([u.ts or 0.0 for u in models], np.float64))


class UpdateProducer:
    """Sends updates to the service's input topic (aiokafka underneath).

    ``send(updates)`` encodes them as records of at most ``max_record_updates`` updates each
    (the service's ``--max-record-updates`` must be as large) in ``encoding``; ``send_value``
    sends a record encoded already (:func:`encode_record`). ``options`` go to
    AIOKafkaProducer over :data:`PRODUCER_OPTIONS` (e.g. ``acks``). Records are delivered in
    order; ``flush()`` (and ``stop()``) wait for everything sent.

    Example::

        async with UpdateProducer("127.0.0.1:9092", encoding="json") as p:
            await p.send([{"op": "insert", "u": 1, "v": 2}])
    """

    def __init__(
        self,
        bootstrap: str,
        topic: str = "dcsm.updates",
        *,
        encoding: RecordEncoding = "binary",
        max_record_updates: int = 10_000,
        **options: Any,
    ) -> None:
        if encoding not in ("binary", "json"):
            raise ValueError(f"encoding must be binary or json, got {encoding!r}")
        self.bootstrap = bootstrap
        self.topic = topic
        self.encoding: RecordEncoding = encoding
        self.max_record_updates = max_record_updates
        self.options = PRODUCER_OPTIONS | options
        self._producer: Any = None

    async def start(self) -> UpdateProducer:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(bootstrap_servers=self.bootstrap, **self.options)
        await producer.start()
        self._producer = producer
        return self

    async def stop(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()

    async def send(
        self, updates: UpdatesLike, *, ts: np.ndarray | None = None, wait: bool = False
    ) -> int:
        """Encode and send ``updates`` (``ts``: float64 (n,) producer times); the number of
        records. ``wait``: return once the broker has acknowledged them."""
        batch = _as_update_batch(updates)
        futures = []
        step = self.max_record_updates
        for a in range(0, len(batch), step):
            b = min(a + step, len(batch))
            value = encode_record(batch.slice(a, b), self.encoding, None if ts is None else ts[a:b])
            futures.append(await self.send_value(value))
        if wait and futures:
            await asyncio.gather(*futures)
        return len(futures)

    async def send_value(self, value: bytes, topic: str | None = None) -> Any:
        """Send one encoded record (to ``topic``, default this producer's); the delivery
        future."""
        if self._producer is None:
            raise RuntimeError("UpdateProducer.start() first")
        return await self._producer.send(topic or self.topic, value)

    async def flush(self) -> None:
        if self._producer is not None:
            await self._producer.flush()

    async def __aenter__(self) -> UpdateProducer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
