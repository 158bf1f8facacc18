"""Chaos run: ``dcsm serve`` killed at random moments while a producer keeps writing a seeded
update stream to Kafka; afterwards the queries, the graph and every delta are checked against
an uninterrupted run.

    python bench/chaos.py --kills 100 --updates 100000 --seed 1 --out bench/results/chaos

The broker test ``tests/kafka/test_chaos.py`` runs this same scenario (:func:`run`) with 20
SIGKILLs, and with 5 SIGTERMs.

The scenario
------------
* A seeded power-law stream of inserts and deletes (:func:`dcsm.loadgen.synth.powerlaw_stream`)
  cut into records of varied sizes: binary batches (:func:`~dcsm.service.codec.encode_binary`,
  1 to 300 updates, half with producer timestamps), single JSON objects and JSON arrays of 2 to
  40. One producer in this process writes them in order and never waits for the service: Kafka
  keeps what a dead service has not read. At each spawn it is given the next share of the
  stream to spread over the time an incarnation is expected to last (measured as it goes).
* Queries: ``tri``, ``path`` and ``square`` (count mode) registered at the start (``path`` is
  deleted half way); ``tri_b`` (``"encoding": "batch"``), ``path_b`` (batch, deleted later)
  and ``square_b`` (count mode, batch) registered mid-stream, all through HTTP. A call that
  dies with the process is retried by the next incarnation: a registration then answered 409
  was logged (``from_seq`` comes from GET), a deletion answered 404 likewise.
* ``--kills`` incarnations of ``dcsm serve`` (``--backend``, the CPU engine by default; one
  shared state directory, checkpoints every 0.3 s or 2,000 updates, ``--kafka-acks 1``),
  each ended by SIGKILL (or SIGTERM) at a seeded random moment of one of these kinds:

  ========== ===============================================================================
  startup    0.2 s to 0.8 x the mean start time after spawn: imports, engine, recovery
  busy       as soon as ``/api/v1/status`` shows updates admitted whose output is not all
             out yet (right after ready it is catching up on the backlog): mid-batch
  checkpoint as soon as ``checkpoint.tmp`` appears: a checkpoint write is under way
  steady     0.3 to 1.5 s after ready: between records or mid-batch, as the load has it
  control    0 to 50 ms into a registration or deletion (incarnations that have one; at most
             a quarter of the kills)
  ========== ===============================================================================

  What each kill actually hit is observed (not ready yet, a temp checkpoint file left behind,
  an HTTP call cut off or answered, updates admitted and not yet out) and reported as
  ``moments``.
* A last incarnation reads the rest, answers the checks, registers the static counts, and is
  stopped with SIGTERM.

The checks (each a count of differences; all must be 0)
--------------------------------------------------------
``queries``: the live queries (name, mode, encoding, ``from_seq``) are those registered and
not deleted, with the ``from_seq`` their registration answered; ``query_log``: the log holds
one entry per registration and deletion, at those seqs. ``graph``: the final checkpoint's
edges are the stream's; ``static_counts``: count-mode queries registered at the end with
``?backfill=true`` count what the CPU engine counts statically on the stream's final graph.
``deltas`` / ``counts``: the rows on the matches topic (per-frame json records and ``batch``
records, expanded with :func:`dcsm.service.frames.rows`), deduplicated by (query, id), equal
the oracle's multiset exactly: the CPU engine over the whole stream, one query at a time, from
its ``from_seq`` to its deletion seq (from the query log); counts per (query, seq, sign).
``duplicate_content``: copies of one id are identical apart from ``emitted_ts``;
``id_headers``: a per-frame record's ``id`` header is its body's id; ``records``: records are
keyed by query; ``dead_letters``: none; ``stats``: each query's ``updates_seen`` and delta
totals match the oracle. Duplicates before dedupe are counted, not errors (at-least-once
output); with SIGTERM no row may be replayed (emitted again later: ``Result.replayed``), and
a copy with its first copy's emission time is told apart as written twice (another offset:
a producer's retry) or read twice (the same offset).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import dataclasses
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

_TESTS = str(Path(__file__).resolve().parents[1] / "tests")  # the oracle and the patterns
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
from helpers import (  # noqa: E402
    PATH,
    SQUARE,
    TRI,
    http_client,
    oracle_counts,
    oracle_deltas,
    spec,
    updates_json,
)

from dcsm.client import UpdateProducer  # noqa: E402
from dcsm.engine import make_engine, warm_up  # noqa: E402
from dcsm.loadgen.embedded import ServiceProcess  # noqa: E402
from dcsm.loadgen.synth import powerlaw_stream  # noqa: E402
from dcsm.model import Graph, Pattern, UpdateBatch  # noqa: E402
from dcsm.service.broker import TansuBroker  # noqa: E402
from dcsm.service.checkpoint import Checkpoint  # noqa: E402
from dcsm.service.codec import encode_binary  # noqa: E402
from dcsm.service.durable import QueryLog  # noqa: E402
from dcsm.service.frames import rows  # noqa: E402
from dcsm.service.ownership import HELD_LINE  # noqa: E402

KINDS = ("startup", "busy", "checkpoint", "steady")
SERVICE_FLAGS = (  # one tansu broker: acks=1 is as durable as all there, and much cheaper
    "--checkpoint-interval-s", "0.3", "--checkpoint-interval-updates", "2000", "--kafka-acks", "1",
)  # fmt: skip
START_TIMEOUT_S = 120.0
SETTLE_TIMEOUT_S = 180.0
CHECKS = (
    "queries", "query_log", "graph", "static_counts", "deltas", "counts", "duplicate_content",
    "id_headers", "records", "dead_letters", "stats",
)  # fmt: skip
Say = Callable[[str], None]


class ChaosError(RuntimeError):
    """The scenario could not be carried out (unlike a difference, which is counted)."""


# -- the plan (seeded) ------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    updates: int = 20_000
    kills: int = 20
    seed: int = 1
    signal: str = "kill"  # "kill": SIGKILL; "term": SIGTERM (graceful drain)
    vertices: int = 0  # 0: updates // 5
    cycle_s: float = 4.0  # first guess of an incarnation's seconds (then measured)
    backend: str = "cpu"  # dcsm serve --backend


@dataclass(frozen=True)
class QueryDef:
    name: str
    pattern: Pattern  # named ``name``
    mode: str
    encoding: str
    register_at: float | None  # share of the incarnations; None: at the start
    delete_at: float | None = None

    def body(self) -> dict[str, Any]:
        return spec(self.pattern, mode=self.mode, encoding=self.encoding)


def _named(p: Pattern, name: str) -> Pattern:
    return dataclasses.replace(p, name=name)


QUERIES = (
    QueryDef("tri", TRI, "embeddings", "json", None),
    QueryDef("path", PATH, "embeddings", "json", None, delete_at=0.5),
    QueryDef("square", SQUARE, "count", "json", None),
    QueryDef("tri_b", _named(TRI, "tri_b"), "embeddings", "batch", 0.2),
    QueryDef("path_b", _named(PATH, "path_b"), "embeddings", "batch", 0.35, delete_at=0.8),
    QueryDef("square_b", _named(SQUARE, "square_b"), "count", "batch", 0.65),
)
STATIC = (TRI, PATH, SQUARE)  # counted at the end with ?backfill=true, as final_<name>


@dataclass
class Op:
    """A registration or deletion due in incarnation ``incarnation`` (or later, if the call
    is cut off: ``tries`` counts the HTTP attempts)."""

    kind: str  # "register" | "delete"
    query: QueryDef
    incarnation: int
    tries: int = 0
    done: bool = False
    how: str = ""  # the answer that settled it: 201, 409+GET, 200, 404
    from_seq: int | None = None  # registration: as answered
    final: dict[str, Any] | None = None  # deletion: the final stats, if the answer came

    def describe(self, until: dict[str, int]) -> str:
        at = self.from_seq if self.kind == "register" else until.get(self.query.name)
        return f"{self.kind} {self.query.name}: {self.how} (try {self.tries}), at seq {at}"


@dataclass(frozen=True)
class Record:
    lo: int
    hi: int
    kind: str  # "binary" | "binary_ts" | "json" | "json_array"


def plan_records(n: int, rng: np.random.Generator) -> list[Record]:
    """Cut ``n`` updates into records of varied sizes and encodings."""
    out = []
    i = 0
    while i < n:
        r = rng.random()
        if r < 0.25:
            kind, size = "json", 1
        elif r < 0.5:
            kind, size = "json_array", int(rng.integers(2, 41))
        else:
            kind = "binary_ts" if rng.random() < 0.5 else "binary"
            size = int(np.exp(rng.uniform(0, np.log(300))))
        out.append(Record(i, min(n, i + size), kind))
        i += size
    return out


def encode(stream: UpdateBatch, rec: Record) -> bytes:
    part = stream.slice(rec.lo, rec.hi)
    if rec.kind.startswith("binary"):
        return encode_binary(
            part, np.full(len(part), time.time()) if rec.kind[-2:] == "ts" else None
        )
    items = updates_json(part)
    return json.dumps(items[0] if rec.kind == "json" else items).encode()


def plan_kills(cfg: Config, rng: np.random.Generator) -> tuple[list[str], list[Op]]:
    """How each incarnation ends, and the registrations and deletions (incarnation
    ``cfg.kills`` is the last one, never killed). Up to a quarter of the incarnations with an
    op end with a "control" kill; the others cycle through KINDS in a seeded order."""

    def at(share: float | None) -> int:
        return 0 if share is None else min(cfg.kills, 1 + int(share * (cfg.kills - 1)))

    ops = [Op("register", q, at(q.register_at)) for q in QUERIES]
    ops += [Op("delete", q, at(q.delete_at)) for q in QUERIES if q.delete_at is not None]
    ops.sort(key=lambda op: op.incarnation)
    with_ops = sorted({op.incarnation for op in ops if 0 < op.incarnation < cfg.kills})
    if len(with_ops) > max(1, cfg.kills // 4):
        with_ops = rng.choice(with_ops, max(1, cfg.kills // 4), replace=False).tolist()
    pool = [KINDS[i % len(KINDS)] for i in range(cfg.kills)]
    rng.shuffle(pool)
    kinds = ["control" if k in with_ops else pool[k] for k in range(cfg.kills)]
    if kinds and kinds[0] == "startup":
        kinds[0] = "steady"  # the first one registers the queries and starts the producer
    return kinds, ops


# -- the result ---------------------------------------------------------------------------------


@dataclass
class Result:
    signal: str
    seed: int
    kills: int
    restarts: int
    updates: int
    records: int
    queries: int
    deltas: int  # expected (oracle) rows
    delta_rows_read: int
    delta_duplicates: int
    count_rows: int  # expected (oracle) rows
    count_rows_read: int
    count_duplicates: int
    duplicates: int
    differences: dict[str, int]
    kinds: dict[str, int]  # planned
    moments: dict[str, int]  # observed
    ops: list[str]
    start_seconds: dict[str, float]
    each_start: list[dict[str, float | None]]  # seconds of each start, its engine's, its lease's
    wall_s: float  # the kills and the last run
    check_s: float = 0.0  # reading the topics and the oracle
    notes: list[str] = field(default_factory=list)
    # Duplicate rows emitted again at a later time: replays by the service (after a restart
    # from an older checkpoint). The others carry their first copy's emission time: sent
    # twice below the service (a producer's retry), not emitted twice.
    replayed: int = 0

    @property
    def total_differences(self) -> int:
        return sum(self.differences.values())

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"total_differences": self.total_differences}

    def summary(self) -> str:
        def items(d: dict[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in sorted(d.items()))

        name = "SIGKILL" if self.signal == "kill" else "SIGTERM"
        lines = [
            f"chaos ({name}, seed {self.seed}): {self.kills} kills, {self.restarts} restarts, "
            f"{self.updates} updates in {self.records} records, {self.queries} queries, "
            f"{self.wall_s:.1f} s + {self.check_s:.1f} s of checks (start "
            f"{self.start_seconds['mean']:.2f} s mean, the input lease's "
            f"{self.start_seconds['lease_mean']:.2f} s, the engine's "
            f"{self.start_seconds['engine_mean']:.2f} s)",
            f"  planned: {items(self.kinds)}",
            f"  moments: {items(self.moments)}",
            f"  ops: {'; '.join(self.ops)}",
            f"  deltas: {self.deltas} expected, {self.delta_rows_read} rows read, "
            f"{self.delta_duplicates} duplicates before dedupe",
            f"  counts: {self.count_rows} expected, {self.count_rows_read} rows read, "
            f"{self.count_duplicates} duplicates before dedupe",
            f"  of the duplicates, {self.replayed} emitted again later (replays), "
            f"{self.duplicates - self.replayed} sent twice with one emission time",
            f"  differences after dedupe: {self.total_differences} ({items(self.differences)})",
        ]
        return "\n".join(lines + [f"  ! {n}" for n in self.notes])


# -- the driver ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Topics:
    updates: str
    matches: str
    dead_letter: str
    group: str

    @staticmethod
    def fresh() -> Topics:
        t = uuid.uuid4().hex[:8]
        return Topics(f"c{t}.updates", f"c{t}.matches", f"c{t}.dead-letter", f"c{t}")

    def flags(self) -> list[str]:
        return [
            "--updates-topic", self.updates, "--matches-topic", self.matches,
            "--dead-letter-topic", self.dead_letter, "--consumer-group", self.group,
        ]  # fmt: skip


class Producer:
    """Writes the records to the updates topic in order, as fast as :meth:`aim` asks."""

    def __init__(self, bootstrap: str, topic: str, stream: UpdateBatch, records: list[Record]):
        self._bootstrap, self._topic = bootstrap, topic
        self._stream, self._records = stream, records
        self.sent = 0  # records
        self.sent_updates = 0
        self._goal = 0
        self._by = 0.0
        self._moved = asyncio.Event()
        self.task: asyncio.Task | None = None

    def aim(self, share: float, by: float) -> None:
        """Produce up to ``share`` of the records, spread evenly until ``by`` (monotonic)."""
        self._goal = max(self._goal, round(share * len(self._records)))
        self._by = by
        self._moved.set()

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="chaos-producer")

    async def _run(self) -> None:
        # UpdateProducer: a record the broker never acknowledged fails the run (DeliveryError).
        async with UpdateProducer(self._bootstrap, self._topic, linger_ms=2) as p:
            while self.sent < len(self._records):
                if self.sent >= self._goal:
                    self._moved.clear()
                    await self._moved.wait()
                    continue
                wait = (self._by - time.monotonic()) / (self._goal - self.sent)
                if wait > 0:
                    await asyncio.sleep(wait)
                rec = self._records[self.sent]
                await p.send_value(encode(self._stream, rec))
                self.sent += 1
                self.sent_updates = rec.hi
            await p.flush()


class Chaos:
    """One run of the scenario against a broker (see the module docstring)."""

    def __init__(self, bootstrap: str, topics: Topics, workdir: Path, cfg: Config, say: Say):
        self.bootstrap, self.topics, self.cfg, self.say = bootstrap, topics, cfg, say
        self.workdir, self.state_dir = workdir, workdir / "state"
        self.rng = rng = np.random.default_rng(cfg.seed)
        self.stream = powerlaw_stream(
            cfg.vertices or max(100, cfg.updates // 5), cfg.updates, num_labels=3,
            seed=cfg.seed, delete_fraction=0.2, gamma=3.0,
        )  # fmt: skip
        self.records = plan_records(cfg.updates, rng)
        self.kinds, self.ops = plan_kills(cfg, rng)
        self.producer = Producer(bootstrap, topics.updates, self.stream, self.records)
        self.moments: Counter[str] = Counter()
        self.start_s: list[float] = []  # spawn to ready
        # Each start awaited whole (_started): its seconds, of which the engine's own start
        # ("engine ... ready in") and the wait for the input lease ("... held after").
        self.each_start: list[dict[str, float | None]] = []
        self.cycles: list[float] = []  # spawn to end
        self.spawns = 0
        self.spawned_at: list[float] = []  # wall time of each spawn (whose rows are whose)
        self.svc: ServiceProcess | None = None
        self.notes: list[str] = []

    # -- processes ----------------------------------------------------------------------------

    def _spawn(self) -> tuple[ServiceProcess, asyncio.Task]:
        """A service on the shared state dir, starting (in a thread: the loop goes on)."""
        svc = self.svc = ServiceProcess(
            *self.topics.flags(), *SERVICE_FLAGS, "--backend", self.cfg.backend,
            kafka=self.bootstrap,
            state_dir=self.state_dir, workdir=self.workdir,
        )  # fmt: skip
        self.spawns += 1
        self.spawned_at.append(time.time())
        t0 = time.monotonic()

        def start() -> float:
            svc.start(START_TIMEOUT_S)
            return time.monotonic() - t0

        return svc, asyncio.create_task(asyncio.to_thread(start))

    def _end(self, svc: ServiceProcess) -> int:
        """Send the configured signal and wait (blocks); the exit code."""
        assert svc.proc is not None
        svc.proc.send_signal(signal.SIGKILL if self.cfg.signal == "kill" else signal.SIGTERM)
        return svc.proc.wait(60)

    async def _stop(self, svc: ServiceProcess) -> int:
        return await asyncio.to_thread(self._end, svc)

    def _tmp_checkpoint(self, since: float) -> bool:
        """A temp checkpoint file written since ``since`` is there (a write under way)."""
        try:
            return (self.state_dir / "checkpoint.tmp").stat().st_mtime >= since
        except OSError:
            return False

    @staticmethod
    async def _status(client: Any) -> dict[str, Any] | None:
        with contextlib.suppress(Exception):
            return (await client.get("/api/v1/status", timeout=2)).json()
        return None

    @staticmethod
    def _moment(status: dict[str, Any] | None) -> str:
        """What a kill right after ``status`` hits."""
        busy = status is not None and status["queued_updates"] > 0
        return "mid-batch" if busy else "between-records"

    # -- registrations and deletions ----------------------------------------------------------

    async def _do(self, client: Any, op: Op) -> None:
        """One HTTP attempt; leaves ``op`` not done on a 503 (draining)."""
        op.tries += 1
        name = op.query.name
        if op.kind == "register":
            r = await client.post("/api/v1/queries", json=op.query.body())
            if r.status_code == 201:
                op.from_seq, op.how, op.done = int(r.json()["from_seq"]), "201", True
            elif r.status_code == 409 and op.tries > 1:  # logged by a try whose reply died
                g = await client.get(f"/api/v1/queries/{name}")
                if g.status_code != 200:
                    raise ChaosError(f"GET {name} after 409: {g.status_code} {g.text}")
                op.from_seq, op.how, op.done = int(g.json()["from_seq"]), "409+GET", True
            elif r.status_code != 503:
                raise ChaosError(f"POST {name} (try {op.tries}): {r.status_code} {r.text}")
        else:
            r = await client.delete(f"/api/v1/queries/{name}")
            if r.status_code == 200:
                op.final, op.how, op.done = r.json()["stats"], "200", True
            elif r.status_code == 404 and op.tries > 1:  # logged by a try whose reply died
                op.how, op.done = "404", True
            elif r.status_code != 503:
                raise ChaosError(f"DELETE {name} (try {op.tries}): {r.status_code} {r.text}")

    async def _started(self, svc: ServiceProcess, starting: asyncio.Task) -> None:
        """Wait until ``svc`` is ready; record its start, and the input lease's and the
        engine's shares of it."""
        self.start_s.append(await starting)
        log = svc.log(1 << 20)
        row: dict[str, float | None] = {"start": self.start_s[-1], "engine": None, "lease": None}
        if found := _ENGINE_READY.findall(log):
            row["engine"] = float(found[-1])
        if found := HELD_LINE.findall(log):
            row["lease"] = float(found[-1])
        self.each_start.append(row)  # the engine and the lease overlap: not a sum
        self.say(  # as it happens: a run stopped before its summary still tells
            f"start {len(self.each_start)}: ready after {row['start']:.2f} s (the engine's "
            f"{_secs(row['engine'])}, the input lease's {_secs(row['lease'])})"
        )

    def _due(self, k: int) -> list[Op]:
        return [op for op in self.ops if not op.done and op.incarnation <= k]

    # -- one incarnation ----------------------------------------------------------------------

    async def incarnation(self, k: int) -> None:
        kind, rng = self.kinds[k], self.rng
        t_spawn, t0 = time.time(), time.monotonic()
        self.producer.aim((k + 1) / self.cfg.kills, t0 + self._mean(self.cycles, self.cfg.cycle_s))
        svc, starting = self._spawn()
        race = None
        if kind == "startup":
            await asyncio.sleep(rng.uniform(0.2, 0.8 * self._mean(self.start_s, 3.0)))
            moment = "starting" if not starting.done() else "between-records"
            code = await self._stop(svc)
            with contextlib.suppress(RuntimeError):  # "dcsm serve exited": what was meant
                self.start_s.append(await starting)
            self._ended(k, kind, moment, code)
            return
        await self._started(svc, starting)
        async with http_client(svc.base_url, 30) as client:
            ops = self._due(k)
            race = ops.pop() if kind == "control" and ops else None
            for op in ops:
                await self._do(client, op)
            if k == 0:
                self.producer.start()
            if race is not None:
                moment, code = await self._kill_during(client, svc, race)
            elif kind == "checkpoint":
                await asyncio.sleep(rng.uniform(0, 0.5))
                code, hit = await asyncio.to_thread(self._kill_at_checkpoint, svc, t_spawn)
                moment = "checkpoint-write" if hit else "between-records"
            else:
                if kind == "busy":
                    status = await self._until_busy(client)
                else:
                    await asyncio.sleep(rng.uniform(0.3, 1.5))
                    status = await self._status(client)
                code = await self._stop(svc)
                moment = self._moment(status)
                if self._tmp_checkpoint(t_spawn):
                    moment = "checkpoint-write"
        self.cycles.append(time.monotonic() - t0)
        self._ended(k, kind, moment, code, race)

    async def _kill_during(self, client: Any, svc: ServiceProcess, op: Op) -> tuple[str, int]:
        """Start ``op``'s HTTP call and end the service 0 to 50 ms into it."""
        import httpx

        task = asyncio.create_task(self._do(client, op))
        await asyncio.sleep(self.rng.uniform(0, 0.05))
        moment = op.kind + ("-answered" if task.done() else "")
        code = await self._stop(svc)
        with contextlib.suppress(httpx.HTTPError):  # the call died with the process
            await task
        return moment, code

    async def _until_busy(self, client: Any) -> dict[str, Any] | None:
        """Poll the status (up to 1.5 s) until updates are admitted and not yet out."""
        deadline = time.monotonic() + 1.5
        status = None
        while time.monotonic() < deadline:
            status = await self._status(client)
            if status is not None and status["queued_updates"] > 0:
                break
            await asyncio.sleep(0.003)
        return status

    def _kill_at_checkpoint(self, svc: ServiceProcess, since: float) -> tuple[int, bool]:
        """Poll for the temp checkpoint file (up to 3 s) and end the service the moment it is
        there (a thread: the poll is tight)."""
        deadline = time.monotonic() + 3.0
        seen = False
        while not seen and time.monotonic() < deadline:
            seen = self._tmp_checkpoint(since)
            time.sleep(0.0005)
        code = self._end(svc)
        # SIGKILL: the temp file left behind says the write was cut off. SIGTERM: the drain
        # finishes it; what counts is that one was under way.
        return code, self._tmp_checkpoint(since) if self.cfg.signal == "kill" else seen

    @staticmethod
    def _mean(values: list[float], default: float) -> float:
        return float(np.mean(values)) if values else default

    def _ended(self, k: int, kind: str, moment: str, code: int, op: Op | None = None) -> None:
        self.moments[moment] += 1
        what = f" ({op.kind} {op.query.name}: {op.how or 'cut off'})" if op else ""
        # (A SIGTERM before the server has its handlers, during imports, ends it at once.)
        if self.cfg.signal == "term" and code != 0 and (kind, code) != ("startup", -15):
            self.notes.append(f"incarnation {k}: SIGTERM exit code {code}")
        self.say(
            f"kill {k + 1}/{self.cfg.kills}: {kind:10} -> {moment}{what}; produced "
            f"{self.producer.sent_updates}/{self.cfg.updates} updates; exit {code}"
        )

    # -- the whole run ------------------------------------------------------------------------

    async def run(self) -> Result:
        t0 = time.monotonic()
        self.say(
            f"chaos: {self.cfg.updates} updates in {len(self.records)} records, "
            f"{self.cfg.kills} x SIG{self.cfg.signal.upper()}, planned {dict(Counter(self.kinds))}"
        )
        try:
            for k in range(self.cfg.kills):
                await self.incarnation(k)
            final = await self.last()
        finally:
            if self.svc is not None:
                self.svc.kill()
            if self.producer.task is not None and not self.producer.task.done():
                self.producer.task.cancel()
        res = await self.check(final, time.monotonic() - t0)
        res.check_s = time.monotonic() - t0 - res.wall_s
        return res

    async def last(self) -> dict[str, Any]:
        """The last incarnation: every op done, everything read; what it says at the end."""
        svc, starting = self._spawn()
        await self._started(svc, starting)
        n = self.cfg.updates
        out: dict[str, Any] = {"static": {}}
        async with http_client(svc.base_url, 60) as client:
            for op in self._due(self.cfg.kills):
                await self._do(client, op)
                if not op.done:
                    raise ChaosError(f"{op.kind} {op.query.name} not done in the last run")
            self.producer.aim(1.0, time.monotonic())
            if self.producer.task is None:
                self.producer.start()
            assert self.producer.task is not None
            await self.producer.task
            deadline = time.monotonic() + SETTLE_TIMEOUT_S
            while (status := (await client.get("/api/v1/status")).json())["processed_seq"] < n - 1:
                if time.monotonic() > deadline:
                    raise ChaosError(f"processed_seq {status['processed_seq']} < {n - 1}")
                await asyncio.sleep(0.05)
            items = (await client.get("/api/v1/queries", params={"pageSize": 1000})).json()
            out["queries"] = items["items"]
            out["stats"] = {
                q["name"]: (await client.get(f"/api/v1/queries/{q['name']}")).json()["stats"]
                for q in items["items"]
            }
            for p in STATIC:
                body = spec(_named(p, f"final_{p.name}"), mode="count")
                r = await client.post("/api/v1/queries", json=body, params={"backfill": "true"})
                if r.status_code != 201:
                    raise ChaosError(f"final backfill {p.name}: {r.status_code} {r.text}")
                out["static"][body["name"]] = int(r.json()["backfill"])
        code = svc.terminate()
        self.svc = None
        if code != 0:
            self.notes.append(f"the final SIGTERM exited with {code}")
        return out

    # -- the checks ---------------------------------------------------------------------------

    async def check(self, final: dict[str, Any], wall_s: float) -> Result:
        n, d = self.cfg.updates, Diffs()
        reg = {op.query.name: op for op in self.ops if op.kind == "register"}
        dels = {op.query.name: op for op in self.ops if op.kind == "delete"}
        live = {name: op for name, op in reg.items() if name not in dels}
        want = {name: (op.query.mode, op.query.encoding, op.from_seq) for name, op in live.items()}
        got = {q["name"]: (q["mode"], q["encoding"], q["from_seq"]) for q in final["queries"]}
        bad = {k for k in want.keys() | got.keys() if want.get(k) != got.get(k)}
        d.add("queries", len(bad), f"registered {want}, live {got}")

        log = QueryLog(self.state_dir / "queries.log")
        entries = log.entries()
        log.close()
        logged = Counter((e["op"], e["name"]) for e in entries)
        expect = Counter([("register", q) for q in reg] + [("unregister", q) for q in dels])
        expect += Counter(("register", f"final_{p.name}") for p in STATIC)
        off = (logged - expect) + (expect - logged)
        d.add("query_log", sum(off.values()), f"entries off by {dict(off)}")
        until = {e["name"]: int(e["from_seq"]) for e in entries if e["op"] == "unregister"}
        for e in entries:
            if e["op"] == "register" and e["name"] in reg:
                at, answered = int(e["from_seq"]), reg[e["name"]].from_seq
                d.add("query_log", int(at != answered), f"{e['name']} at {at}, not {answered}")

        ref = make_engine("cpu")
        ref.apply(self.stream)
        ckpt = Checkpoint.latest(self.state_dir)
        if ckpt is None:
            d.add("graph", 1, "no final checkpoint")
        else:
            k = len(_edges(ckpt.graph) ^ _edges(ref.export_graph()))
            d.add("graph", k, f"{k} edges differ in the final checkpoint")
            d.add("graph", int(ckpt.next_seq != n), f"final checkpoint at {ckpt.next_seq}")
        static = {f"final_{p.name}": ref.count_static(p) for p in STATIC}
        ref.close()
        for name, exact in static.items():
            seen = final["static"][name]
            d.add("static_counts", int(seen != exact), f"{name}: {seen}, expected {exact}")

        exp_deltas, exp_counts = expected(self.stream, reg, until)
        t = Tally(d)
        records = await read_topic(self.bootstrap, self.topics.matches)
        for rec in records:
            t.add(rec)
        for name, exact in static.items():
            got_rows = [(r.get("backfill"), r["count"]) for r in t.static.get(name, [])]
            d.add("static_counts", int(got_rows != [(True, exact)]), f"{name} rows {got_rows}")
        off = (t.deltas - exp_deltas) + (exp_deltas - t.deltas)
        d.add("deltas", sum(off.values()), f"deltas off: {sorted(off.items())[:5]}")
        keys = exp_counts.keys() | t.counts.keys()
        wrong = sorted(k for k in keys if exp_counts.get(k) != t.counts.get(k))
        d.add("counts", len(wrong), f"count rows off: {wrong[:5]}")
        dead = await read_topic(self.bootstrap, self.topics.dead_letter)
        d.add("dead_letters", len(dead), f"{len(dead)} dead letters")

        finals = {name: final["stats"].get(name) for name in live}
        finals |= {name: op.final for name, op in dels.items() if op.final is not None}
        for name, st in finals.items():
            if st is None:
                continue
            if reg[name].query.mode == "embeddings":
                signs = [x[1] for x in exp_deltas.elements() if x[0] == name]
                plus, minus = signs.count(1), signs.count(-1)
            else:
                plus = sum(c for (q, _, s), c in exp_counts.items() if q == name and s > 0)
                minus = sum(c for (q, _, s), c in exp_counts.items() if q == name and s < 0)
            seen = (st["updates_seen"], st["deltas"]["+"], st["deltas"]["-"])
            exact = (until.get(name, n) - (reg[name].from_seq or 0), plus, minus)
            d.add("stats", int(seen != exact), f"{name}: (seen, +, -) {seen}, not {exact}")

        term_copies = self.cfg.signal == "term" and t.copies  # said (module docstring)
        if term_copies:
            self.notes.extend(self._describe_copies(t.copies))
        if sum(d.counts.values()) or term_copies:  # keep the evidence beside the state dir
            with open(self.workdir / "matches.jsonl", "w") as fh:
                for rec in records:
                    row = {
                        "offset": rec.offset,
                        "key": rec.key.decode(),
                        "value": rec.value.decode(),
                    }
                    fh.write(json.dumps(row) + "\n")
        starts = np.array(self.start_s)
        engine, lease = (
            np.array([r[k] for r in self.each_start if r[k] is not None] or [np.nan])
            for k in ("engine", "lease")
        )
        return Result(
            signal=self.cfg.signal, seed=self.cfg.seed, kills=self.cfg.kills,
            restarts=self.spawns - 1, updates=n, records=len(self.records), queries=len(reg),
            deltas=sum(exp_deltas.values()), delta_rows_read=t.rows["delta"],
            delta_duplicates=t.duplicates["delta"], count_rows=len(exp_counts),
            count_rows_read=t.rows["count"], count_duplicates=t.duplicates["count"],
            duplicates=sum(t.duplicates.values()), differences=dict(d.counts),
            kinds=dict(Counter(self.kinds)), moments=dict(self.moments),
            ops=[op.describe(until) for op in self.ops],
            start_seconds={"mean": float(starts.mean()), "max": float(starts.max()),
                           "engine_mean": float(engine.mean()), "engine_max": float(engine.max()),
                           "lease_mean": float(lease.mean()), "lease_max": float(lease.max())},
            each_start=self.each_start,
            wall_s=wall_s, notes=self.notes + d.notes,
            replayed=sum(1 for c in t.copies if c.again_ts != c.first_ts),
        )  # fmt: skip

    def _describe_copies(self, copies: list[Copy]) -> list[str]:
        """Whose rows came twice: a copy emitted later is a replay (by the incarnation
        after the one that first sent it); one with the same emitted_ts was written twice
        (another offset) or read twice (the same offset)."""

        def inc(ts: float) -> int:
            return bisect.bisect_right(self.spawned_at, ts) - 1

        same = [c for c in copies if c.again_ts == c.first_ts]
        read_twice = sum(1 for c in same if c.again_at == c.first_at)
        by: Counter[tuple[int, int]] = Counter((inc(c.first_ts), inc(c.again_ts)) for c in copies)
        out = [
            f"duplicate rows: {len(copies) - len(same)} emitted again later, {len(same)} with "
            f"the same emitted_ts ({len(same) - read_twice} at another offset, {read_twice} at "
            "the same); (first incarnation, again) rows: "
            + ", ".join(f"({a}, {b}) {n}" for (a, b), n in sorted(by.items()))
        ]
        for c in copies[:5]:
            out.append(f"duplicate {c.query} seq {c.seq}: emitted {c.first_ts:.6f} at (partition, "
                       f"offset) {c.first_at}, again {c.again_ts:.6f} at {c.again_at}")  # fmt: skip
        return out


class Copy(NamedTuple):
    """A row read again: its query and seq, and each copy's emission time and record."""

    query: str
    seq: int
    first_ts: float
    again_ts: float
    first_at: tuple[int, int]  # (partition, offset)
    again_at: tuple[int, int]


class Diffs:
    """Differences per check, with the first few of each described."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter({c: 0 for c in CHECKS})
        self.notes: list[str] = []
        self._described: Counter[str] = Counter()

    def add(self, check: str, k: int, what: str) -> None:
        if k:
            self.counts[check] += k
            self._described[check] += 1
            if self._described[check] <= 5:
                self.notes.append(f"{check}: {what}")


def expected(
    stream: UpdateBatch, reg: dict[str, Op], until: dict[str, int]
) -> tuple[Counter[tuple], dict[tuple, int]]:
    """The uninterrupted run: deltas ``(query, sign, seq, match)`` and counts
    ``{(query, seq, sign): count}`` of each query from its from_seq to its deletion."""
    deltas: Counter[tuple] = Counter()
    counts: dict[tuple, int] = {}
    for name, op in reg.items():
        q, lo, hi = op.query, op.from_seq or 0, until.get(name, len(stream))
        if q.mode == "embeddings":
            deltas.update(x for x in oracle_deltas(stream, [(q.pattern, lo)]) if x[2] < hi)
        else:
            for seq, c in oracle_counts(stream, q.pattern, lo).items():
                if seq < hi:
                    counts[(name, seq, 1 if c > 0 else -1)] = abs(c)
    return deltas, counts


_EMITTED = re.compile(rb',"emitted_ts":[^,}]*')
_ENGINE_READY = re.compile(r"engine \w+ ready in ([0-9.]+)s")  # engine_worker's log line


def _secs(s: float | None) -> str:
    return "not logged" if s is None else f"{s:.2f} s"


@dataclass
class Tally:
    """The matches topic's rows (both encodings), deduplicated by (query, id): ``deltas``
    ``(query, sign, seq, match)``, ``counts`` ``{(query, seq, sign): count}``; ``rows`` and
    ``duplicates`` per kind ("delta", "count"); ``static``: the final_<name> rows."""

    diffs: Diffs
    deltas: Counter[tuple] = field(default_factory=Counter)
    counts: dict[tuple, int] = field(default_factory=dict)
    rows: Counter[str] = field(default_factory=Counter)
    duplicates: Counter[str] = field(default_factory=Counter)
    static: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _first: dict[tuple[str, str], Any] = field(default_factory=dict)
    # Each (query, id) row's first emitted_ts and (partition, offset), and each duplicate.
    _emitted: dict[tuple[str, str], tuple[float, tuple[int, int]]] = field(default_factory=dict)
    copies: list[Copy] = field(default_factory=list)

    def add(self, rec: Any) -> None:
        d = self.diffs
        body = json.loads(rec.value)
        d.add("records", int(rec.key != body["query"].encode()), f"key {rec.key!r}: {body}")
        if body.get("type") in (None, "count"):  # one frame per delta or count
            header = dict(rec.headers or ()).get("id")
            ok = header is not None and header.decode() == body["id"]
            d.add("id_headers", int(not ok), f"id header {header!r}, body id {body['id']}")
            # A replayed frame is byte-identical apart from its emission time.
            self._once((body["query"], "frame:" + body["id"]), _EMITTED.sub(b"", rec.value))
        for row in rows(body):
            kind, name = row.get("type"), row["query"]
            if kind not in (None, "count"):
                continue  # gap / end frames
            if name.startswith("final_"):
                self.static.setdefault(name, []).append(row)
                continue
            what = "delta" if kind is None else "count"
            value = tuple(row["match"]) if what == "delta" else row["count"]
            self.rows[what] += 1
            content = (row["sign"], row["seq"], value, row["arrival_ts"], row.get("backfill"))
            key = (name, row["id"])
            at = (rec.partition, rec.offset)
            self._emitted.setdefault(key, (row["emitted_ts"], at))
            if not self._once(key, content):
                first_ts, first_at = self._emitted[key]
                self.copies.append(
                    Copy(name, row["seq"], first_ts, row["emitted_ts"], first_at, at)
                )
                self.duplicates[what] += 1
            elif what == "delta":
                self.deltas[(name, row["sign"], row["seq"], value)] += 1
            else:
                self.counts[(name, row["seq"], row["sign"])] = value

    def _once(self, key: tuple[str, str], content: Any) -> bool:
        """True the first time ``key`` comes; later, whether the copy is the same."""
        if key not in self._first:
            self._first[key] = content
            return True
        first = self._first[key]
        self.diffs.add("duplicate_content", int(first != content), f"{key}: {first} / {content}")
        return False


def _edges(g: Graph) -> set[tuple[int, int]]:
    a, b = np.minimum(g.src, g.dst).tolist(), np.maximum(g.src, g.dst).tolist()
    return set(zip(a, b, strict=True))


async def read_topic(bootstrap: str, topic: str) -> list[Any]:
    """Every record of ``topic`` (all partitions), once nothing more arrives."""
    from aiokafka import AIOKafkaConsumer, TopicPartition

    c = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False,
        max_partition_fetch_bytes=16 * 1024 * 1024,
    )  # fmt: skip
    await c.start()
    try:
        parts = None
        for _ in range(100):
            if parts := c.partitions_for_topic(topic):
                break
            await c.force_metadata_update()
            await asyncio.sleep(0.05)
        tps = [TopicPartition(topic, p) for p in sorted(parts or ())]
        if not tps:
            return []
        c.assign(tps)
        await c.seek_to_beginning(*tps)
        out: list[Any] = []
        read = dict.fromkeys(tps, 0)
        # Until the end offsets stop moving: tansu's high watermark trails what it has
        # acknowledged with acks=1 by a moment.
        while (end := await c.end_offsets(tps)) != read:
            while left := {tp for tp in tps if read[tp] < end[tp]}:
                for tp, msgs in (await c.getmany(*left, timeout_ms=500)).items():
                    out.extend(msgs)
                    read[tp] = msgs[-1].offset + 1 if msgs else read[tp]
            await asyncio.sleep(0.5)
        return out
    finally:
        await c.stop()


async def run(
    bootstrap: str, topics: Topics, workdir: Path, cfg: Config, say: Say = print
) -> Result:
    """The scenario on a running broker; ``workdir`` gets the state dir and service logs."""
    return await Chaos(bootstrap, topics, workdir, cfg, say).run()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--kills", type=int, default=100)
    p.add_argument("--updates", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--signal", choices=["kill", "term"], default="kill")
    p.add_argument("--backend", choices=["cpu", "gpu"], default="cpu",
                   help="the engine of every dcsm serve incarnation")  # fmt: skip
    p.add_argument("--out", default="bench/results/chaos")
    args = p.parse_args()
    warm_up("cpu")  # compiled once here, so the services load it from numba's disk cache
    cfg = Config(args.updates, args.kills, args.seed, args.signal, backend=args.backend)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="dcsm-chaos-"))
    with TansuBroker() as broker:
        res = asyncio.run(run(broker.bootstrap, Topics.fresh(), work, cfg))
    if res.total_differences == 0:
        shutil.rmtree(work)
    else:
        print(f"kept {work}: the state dir, every service log, matches.jsonl")
    report = res.as_dict() | {
        "command": "python bench/chaos.py " + " ".join(sys.argv[1:]),
        "cpus": os.cpu_count(),
    }
    (out / "result.json").write_text(json.dumps(report, indent=2) + "\n")
    print(res.summary())
    print(f"wrote {out / 'result.json'}")
    return 0 if res.total_differences == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
