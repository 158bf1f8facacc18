"""The HTTP clients: :class:`Client` (blocking) and :class:`AsyncClient` (asyncio), one method
per route of the service's API, over httpx."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from dcsm.client.models import (
    ApiError,
    FrameEncoding,
    Mode,
    Query,
    QueryLike,
    QueryPage,
    Status,
    UpdatesLike,
    UpdatesResult,
)
from dcsm.client.subscription import Subscription


def _checked(r: httpx.Response) -> Any:
    if r.status_code >= 400:
        raise ApiError.from_response(r)
    return r.json()


# -- request bodies (shared by both clients) ------------------------------------------------


def _query_body(
    query: QueryLike, mode: Mode | None, encoding: FrameEncoding | None, replica: int | None
) -> Any:
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
    if replica is not None:
        body["replica"] = replica
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
        replica: int | None = None,
    ) -> Query:
        """Register ``query`` (a QuerySpec, a Pattern or a QuerySpec-shaped dict); it sees
        every update from the returned ``from_seq`` on. ``mode``: ``embeddings`` (every
        delta) or ``count``; ``encoding``: its frames on the matches topic; ``backfill``:
        first report the matches already in the graph; ``replica``: with replicas in shard
        mode queries, the replica that must match it (default: the least loaded). 409
        ``already_exists`` if the name is taken."""
        params = {"backfill": "true"} if backfill else None
        r = self.http.post(
            "/api/v1/queries", json=_query_body(query, mode, encoding, replica), params=params
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
        replica: int | None = None,
    ) -> Query:
        """See :meth:`Client.register_query`."""
        params = {"backfill": "true"} if backfill else None
        r = await self.http.post(
            "/api/v1/queries", json=_query_body(query, mode, encoding, replica), params=params
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
