"""The query catalog: names, engine ids, definitions, live stats and subscribers.

Lives on the event loop. The API reserves a name (so a second POST gets 409 at once), the
fan-out marks it live when the engine has registered it and removes it when the engine has
unregistered it, so every delta of a query finds its state in between.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from dcsm.schemas import QuerySpec
from dcsm.stats import percentiles

from .errors import QueryExists, QueryNotFound, ServiceError
from .frames import Encoding
from .replicas import pin_of
from .subscribers import Subscriber

Mode = Literal["embeddings", "count"]
LATENCY_WINDOW = 4096


@dataclass
class QueryStats:
    """Running totals; ``latency`` keeps the last LATENCY_WINDOW arrival->emission times."""

    plus: int = 0
    minus: int = 0
    not_shipped: int = 0  # deltas past the query's max_deltas_per_update (overflow frames)
    updates_seen: int = 0
    backfill: int = 0
    latency: np.ndarray = field(default_factory=lambda: np.zeros(LATENCY_WINDOW))
    _filled: int = 0
    _head: int = 0

    def record_latency(self, seconds: np.ndarray) -> None:
        seconds = seconds[-LATENCY_WINDOW:]
        k = len(seconds)
        end = self._head + k
        if end <= LATENCY_WINDOW:
            self.latency[self._head : end] = seconds
        else:
            cut = LATENCY_WINDOW - self._head
            self.latency[self._head :] = seconds[:cut]
            self.latency[: k - cut] = seconds[cut:]
        self._head = end % LATENCY_WINDOW
        self._filled = min(LATENCY_WINDOW, self._filled + k)

    def as_dict(self) -> dict[str, Any]:
        pct: dict[str, Any] = percentiles(self.latency[: self._filled])
        pct["window"] = pct.pop("n")
        return {
            "deltas": {"+": self.plus, "-": self.minus},
            "not_shipped": self.not_shipped,
            "backfill": self.backfill,
            "updates_seen": self.updates_seen,
            "match_latency_seconds": pct,
        }


@dataclass
class QueryState:
    name: str
    qid: int
    spec: QuerySpec
    mode: Mode
    encoding: Encoding = "json"
    from_seq: int = -1
    created_at: float = field(default_factory=time.time)
    live: bool = False
    closing: bool = False
    stats: QueryStats = field(default_factory=QueryStats)
    subscribers: set[Subscriber] = field(default_factory=set)
    count_subscribers: set[Subscriber] = field(default_factory=set)
    # Collects frames from registration until the first subscriber of the query's own kind
    # claims it, so "register, then connect" misses nothing (backfill included).
    pending: Subscriber | None = None
    # Most deltas shipped per update (embeddings mode); None: no cap. Past it the engine
    # counts the rest and the fan-out sends an overflow frame instead.
    max_deltas: int | None = None
    # The replica that matches it (service/replicas.py): decided once, when the query is
    # registered, and kept (checkpoints); None where every replica does (shard updates).
    replica: int | None = 0
    pin: int | None = None  # the replica the registration named, if it named one
    # A backfill running beside the stream (service/backfill.py), and the live frames held
    # until it is out: (emit, args, kwargs) calls of the fan-out, in seq order.
    backfill_job: Any = None
    held: list[tuple[Any, tuple, dict[str, Any]]] = field(default_factory=list)

    @property
    def num_vertices(self) -> int:
        return len(self.spec.vertices)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "query": self.spec.model_dump(),
            "mode": self.mode,
            "encoding": self.encoding,
            "max_deltas_per_update": self.max_deltas,
            "from_seq": self.from_seq,
            "created_at": self.created_at,
            "state": self._state(),
            # roots of the graph done (0..1) while a backfill runs beside the stream
            "backfill_progress": (
                None if self.backfill_job is None else round(self.backfill_job.progress, 4)
            ),
            "replica": self.replica,
            "pinned": self.pin is not None,
        }

    def _state(self) -> str:
        if self.closing:
            return "deleting"
        if self.backfill_job is not None:
            return "backfilling"
        return "live" if self.live else "registering"

    def all_subscribers(self) -> list[Subscriber]:
        subs = [*self.subscribers, *self.count_subscribers]
        return subs + [self.pending] if self.pending is not None else subs

    def persist(self) -> dict[str, Any]:
        """What a snapshot keeps of this query."""
        s = self.stats
        return {
            "name": self.name, "qid": self.qid, "spec": self.spec.model_dump(), "mode": self.mode,
            "encoding": self.encoding, "from_seq": self.from_seq, "created_at": self.created_at,
            "max_deltas": self.max_deltas, "replica": self.replica, "pin": self.pin,
            "stats": {"plus": s.plus, "minus": s.minus, "updates_seen": s.updates_seen,
                      "backfill": s.backfill, "not_shipped": s.not_shipped},
        }  # fmt: skip

    @staticmethod
    def restore(row: dict[str, Any], replica: int | None) -> QueryState:
        """A query of a checkpoint; ``replica``: its owner as the restart decides it
        (:meth:`Sharding.restored_owners`)."""
        st = QueryState(
            name=row["name"], qid=int(row["qid"]), spec=QuerySpec.model_validate(row["spec"]),
            mode=row["mode"], encoding=row.get("encoding", "json"), from_seq=int(row["from_seq"]),
            created_at=float(row["created_at"]), live=True, max_deltas=row.get("max_deltas"),
            replica=replica, pin=pin_of(row),
        )  # fmt: skip
        for k, v in row.get("stats", {}).items():
            setattr(st.stats, k, int(v))
        return st


class QueryCatalog:
    def __init__(self, pending_frames: int) -> None:
        self._pending_frames = pending_frames
        self._by_name: dict[str, QueryState] = {}
        self._by_qid: dict[int, QueryState] = {}
        self._next_qid = 0

    def __len__(self) -> int:
        return len(self._by_qid)

    def reserve(
        self,
        spec: QuerySpec,
        mode: Mode,
        encoding: Encoding,
        on_drop: Any = None,
        max_deltas: int | None = None,
        replace_closing: bool = False,
    ) -> QueryState:
        """A new query (not live until the engine has registered it); 409 if the name is
        taken (``replace_closing``: by a query not being deleted, see :meth:`check_free`)."""
        self.check_free(spec.name, replace_closing)
        st = QueryState(spec.name, self._next_qid, spec, mode, encoding, max_deltas=max_deltas)
        st.pending = Subscriber(self._pending_frames, on_drop, encoding)
        self._add(st)
        return st

    def check_free(self, name: str, replace_closing: bool = False) -> None:
        """409 if ``name`` is taken (the early answer; replicas check again in order).
        ``replace_closing``: a query being deleted leaves its name free. A control record
        applied in order checks so: a deleted query stays in the catalog until the fan-out
        has its engine's answer, which each replica reaches at its own pace, while its
        deletion was applied at the same seq on every replica."""
        old = self._by_name.get(name)
        if old is not None and not (replace_closing and old.closing):
            raise QueryExists(
                f"a query named {name!r} already exists",
                [{"field": "name", "reason": "already exists; DELETE it first or pick another"}],
            )

    def _add(self, st: QueryState) -> None:
        self._by_name[st.name] = st
        self._by_qid[st.qid] = st
        self._next_qid = max(self._next_qid, st.qid + 1)

    def adopt(self, st: QueryState, on_drop: Any = None) -> None:
        """Add a restored query (from a checkpoint or the query log)."""
        st.pending = Subscriber(self._pending_frames, on_drop, st.encoding)
        self._add(st)

    def remove(self, st: QueryState) -> None:
        if self._by_name.get(st.name) is st:  # not a new query of that name
            del self._by_name[st.name]
        self._by_qid.pop(st.qid, None)

    def get(self, name: str) -> QueryState:
        st = self._by_name.get(name)
        if st is None:
            raise QueryNotFound(f"no query named {name!r}")
        return st

    def find(self, name: str) -> QueryState | None:
        return self._by_name.get(name)

    def by_qid(self, qid: int) -> QueryState | None:
        return self._by_qid.get(qid)

    def owners(self) -> list[int | None]:
        """The owners of the queries not being deleted: what a new query is placed by. One
        being deleted is left out at once, on every replica alike (its removal from the
        catalog waits for the engine)."""
        return [st.replica for st in self._by_name.values() if not st.closing]

    def live(self) -> list[QueryState]:
        return [st for st in self.states() if st.live]

    def states(self) -> list[QueryState]:
        """Every query in the order added, one being deleted included while its name is
        taken again (``get`` and ``find`` by name give the newest)."""
        return list(self._by_qid.values())

    def page(self, size: int, token: str | None) -> tuple[list[QueryState], str | None]:
        """Queries sorted by name after the one ``token`` encodes; the next token or None."""
        after = ""
        if token:
            try:
                after = base64.urlsafe_b64decode(token.encode()).decode()
            except Exception:
                raise ServiceError(
                    "invalid page token",
                    [{"field": "pageToken", "reason": "not a token we issued"}],
                ) from None
        names = sorted(n for n in self._by_name if n > after)
        chosen = names[:size]
        more = len(names) > size
        nxt = base64.urlsafe_b64encode(chosen[-1].encode()).decode() if more and chosen else None
        return [self._by_name[n] for n in chosen], nxt
