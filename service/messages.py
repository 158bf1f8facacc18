"""What crosses the engine thread's queues: commands (event loop -> engine thread, in seq
order) and events (engine thread -> fan-out, in the same order).

Data flows one way: ingest and the API build commands, the :class:`~dcsm.service.sequencer.
Sequencer` gives them their place, the :class:`~dcsm.service.engine_worker.EngineWorker` runs
them and answers each with exactly one event, the :class:`~dcsm.service.fanout.Fanout` turns
events into frames and settles each command's :class:`Origin` or reply future. One event
comes from elsewhere: a backfill run beside the stream (:mod:`dcsm.service.backfill`) sends
its rows as :class:`BackfillPart` events while it runs (embeddings without a cap) and ends
with a :class:`BackfillDone`, all after its registration's :class:`Registered`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from dcsm.engine import BatchResult
from dcsm.model import Graph, Pattern, UpdateBatch

if TYPE_CHECKING:
    from .backfill import BackfillJob

Positions = dict[str, dict[int, int]]  # input source -> partition -> next offset to read


class Origin(Protocol):
    """Where a slice of an applied batch came from (an HTTP request, a Kafka poll, a
    write-ahead-log record). Settled by the fan-out once the slice's frames are out."""

    async def settle(self, seq: np.ndarray, outcome: np.ndarray) -> None:
        """The slice is through: seq int64 (n,), outcome int8 (n,) (``dcsm.model.OUTCOME_*``)."""

    async def fail(self, error: BaseException) -> None:
        """Called instead of :meth:`settle` when the engine raised on the slice."""


# -- commands (loop -> engine thread) -------------------------------------------------------


@dataclass(slots=True)
class Apply:
    """Updates with their final seqs and arrival times (``batch.ts``); ``received`` is when
    the service read them (response-time metrics); ``origin`` rides along untouched."""

    batch: UpdateBatch
    received: float
    origin: Origin | None = None


@dataclass(slots=True)
class Register:
    """Register query ``qid`` from ``from_seq`` on (a query-log entry)."""

    qid: int
    pattern: Pattern
    from_seq: int
    count_only: bool
    backfill: bool
    reply: asyncio.Future[int | None] | None = None
    max_deltas: int | None = None  # delta rows per update; None: no cap
    # Another replica matches this query (shard queries): the catalog has it, the engine not.
    remote: bool = False
    # A query-log entry (counted in checkpoints' log_entries); False: a control record of
    # the input topic, which the input offsets cover instead.
    logged: bool = True


@dataclass(slots=True)
class Unregister:
    qid: int
    from_seq: int
    reply: asyncio.Future[dict[str, Any]] | None = None
    remote: bool = False  # as Register.remote
    logged: bool = True  # as Register.logged


@dataclass(slots=True)
class Export:
    """Take a checkpoint of the graph as it stands before ``at_seq``: every update before it
    is applied, none after. ``positions`` are the input offsets right after the last record
    whose updates lie before ``at_seq``; ``log_entries`` the query-log entries applied."""

    at_seq: int
    positions: Positions
    log_entries: int
    reply: asyncio.Future[tuple[Exported, list[dict[str, Any]]]] | None = None


@dataclass(slots=True)
class Barrier:
    """Resolves once everything submitted before it is fanned out (drain, tests)."""

    reply: asyncio.Future[None] | None = None


Control = Register | Unregister | Export | Barrier
Command = Apply | Control


# -- events (engine thread -> loop) ---------------------------------------------------------


@dataclass(slots=True)
class Slice:
    """The part ``[start, stop)`` of an applied batch that one command contributed."""

    start: int
    stop: int
    origin: Origin | None


@dataclass(slots=True)
class Applied:
    """``received``: float64 (n,), when the service read each update (the engine schedules
    by it; response-time metrics measure from it)."""

    batch: UpdateBatch
    result: BatchResult
    slices: list[Slice]
    received: np.ndarray


@dataclass(slots=True)
class ApplyFailed:
    """The engine raised on these updates: they are failed back to their origins."""

    parts: list[Apply]
    error: BaseException


@dataclass(slots=True)
class Registered:
    """The query is registered at ``cmd.from_seq``. Its backfill, if asked for, is either
    here (computed inline) or ``backfill_job``, running beside the stream: a
    :class:`BackfillDone` follows."""

    cmd: Register
    backfill_matches: np.ndarray | None = None  # int64 (k, n)
    backfill_count: int | None = None
    backfill_job: BackfillJob | None = None


@dataclass(slots=True)
class BackfillPart:
    """The next rows of a backfill run beside the stream (embeddings mode without a cap),
    sent once every slice before them is done, so that a backfill of billions of rows is
    never held whole: more parts, then the :class:`BackfillDone`, follow."""

    cmd: Register
    matches: np.ndarray  # int64 (k, n)


@dataclass(slots=True)
class BackfillDone:
    """A backfill run beside the stream is over: its whole count, its matches not sent as
    parts already (embeddings mode, int64 (k, n)), or the error that stopped it."""

    cmd: Register
    count: int = 0
    matches: np.ndarray | None = None
    seconds: float = 0.0
    error: BaseException | None = None


@dataclass(slots=True)
class Unregistered:
    cmd: Unregister


@dataclass(slots=True)
class Exported:
    cmd: Export
    graph: Graph
    seconds: float = 0.0  # engine time spent exporting


@dataclass(slots=True)
class BarrierReached:
    cmd: Barrier


@dataclass(slots=True)
class ControlFailed:
    """A registration, unregistration or export the engine refused (an engine error)."""

    cmd: Register | Unregister | Export
    error: BaseException


class BackfillRunning(Exception):
    """An export's answer while a backfill runs beside the stream: its query's live deltas
    are held, so no checkpoint can cover them yet (the checkpointer tries again later)."""


Event = (
    Applied
    | ApplyFailed
    | Registered
    | BackfillPart
    | BackfillDone
    | Unregistered
    | Exported
    | BarrierReached
    | ControlFailed
)
