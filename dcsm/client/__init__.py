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

Modules: :mod:`~dcsm.client.models` (results, rows, batches, :class:`ApiError`),
:mod:`~dcsm.client.http` (:class:`Client`, :class:`AsyncClient`),
:mod:`~dcsm.client.subscription` (:class:`Subscription`, :func:`parse_frame`),
:mod:`~dcsm.client.kafka` (:class:`UpdateProducer`, :class:`DeliveryError`,
:func:`encode_record`). Import from
``dcsm.client``.
"""

# Names marked noqa: F401 are outside ``__all__`` (type aliases, close codes) and stay
# importable from here, as they were from the one-module client.
from dcsm.client.http import AsyncClient, Client
from dcsm.client.kafka import PRODUCER_OPTIONS, DeliveryError, UpdateProducer, encode_record
from dcsm.client.models import (
    ApiError,
    BatchItem,  # noqa: F401
    Count,
    CountBatch,
    Delta,
    DeltaBatch,
    End,
    FrameEncoding,  # noqa: F401
    Gap,
    Item,  # noqa: F401
    Mode,  # noqa: F401
    Query,
    QueryLike,  # noqa: F401
    QueryPage,
    RecordEncoding,  # noqa: F401
    Row,  # noqa: F401
    Status,
    UpdatesLike,  # noqa: F401
    UpdatesResult,
)
from dcsm.client.subscription import (
    WS_CLOSE_NOT_FOUND,  # noqa: F401
    WS_CLOSE_POLICY,  # noqa: F401
    WS_CLOSE_WRONG_KIND,  # noqa: F401
    Subscription,
    parse_frame,
)

__all__ = [
    "PRODUCER_OPTIONS",
    "ApiError",
    "AsyncClient",
    "Client",
    "Count",
    "CountBatch",
    "Delta",
    "DeltaBatch",
    "DeliveryError",
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
