"""The engine thread: the only place the (synchronous, CPU- or GPU-heavy) engine is called.

Commands arrive on a thread-safe queue in the order the :class:`~dcsm.service.sequencer.
Sequencer` gave them seqs; the thread runs them strictly in that order and hands one event per
command, in the same order, to the event loop's events queue. Handing over never waits for a
loop turn (``call_soon_threadsafe``); at most ``max_events`` events may be outstanding, and
the fan-out returns a slot per event handled (:meth:`EngineWorker.event_done`), so when the
loop falls behind the engine waits: backpressure rather than unbounded memory.

Consecutive :class:`Apply` commands are merged into one ``engine.apply`` call of at most
``max_batch_updates`` updates, so the batch size adapts to load: one update at a time when
idle, large batches under pressure.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dcsm.engine import BatchResult, Engine, make_engine, warm_up
from dcsm.model import Graph, Pattern, UpdateBatch

log = logging.getLogger("dcsm.service.engine")


# -- commands (loop -> engine thread) -------------------------------------------------------


@dataclass
class Apply:
    """Updates with their final seqs and arrival times; ``origin`` rides along to the
    fan-out untouched (HTTP reply future, Kafka offsets)."""

    batch: UpdateBatch
    origin: Any = None


@dataclass
class Register:
    qid: int
    pattern: Pattern
    from_seq: int
    count_only: bool
    backfill: bool
    reply: Any = None


@dataclass
class Unregister:
    qid: int
    from_seq: int
    reply: Any = None


@dataclass
class Export:
    """Ask for the current graph (snapshots) as of just before seq ``at_seq``."""

    at_seq: int
    reply: Any = None


@dataclass
class Barrier:
    """No-op that resolves once everything before it has been fanned out (drain)."""

    reply: Any = None


# -- events (engine thread -> loop) ---------------------------------------------------------


@dataclass
class Applied:
    batch: UpdateBatch
    result: BatchResult
    origins: list[tuple[int, int, Any]]  # (start, stop) slice of batch, origin


@dataclass
class Registered:
    cmd: Register
    backfill_matches: np.ndarray | None = None  # int64 (k, n)
    backfill_count: int | None = None


@dataclass
class Done:
    """A command that produced nothing but completion (Unregister, Barrier)."""

    cmd: Any


@dataclass
class Exported:
    cmd: Export
    graph: Graph
    next_seq: int


@dataclass
class Failed:
    """A command that raised; for a failed apply ``cmd`` is the list of Apply commands."""

    cmd: Any
    error: BaseException


_STOP = object()


@dataclass
class EngineWorker:
    """Owns the engine and its thread.

    Args:
        backend: make_engine backend name.
        events: loop-side queue the events go to (unbounded; ``max_events`` bounds it).
        graph: initial graph to bulk-load (a restored snapshot or --graph), or None.
        restore: (qid, pattern, count_only) of queries to re-register at ``next_seq``.
        next_seq: seq of the first update this engine will see.
        max_batch_updates: most updates per engine.apply call.
    """

    backend: str
    events: asyncio.Queue
    graph: Graph | None = None
    restore: list[tuple[int, Pattern, bool]] = field(default_factory=list)
    next_seq: int = 0
    max_batch_updates: int = 8192
    max_events: int = 64
    memory_bytes: int = 0
    backend_name: str = ""
    ready: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    _commands: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    _thread: threading.Thread | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    _pending: int = 0

    def __post_init__(self) -> None:
        self._depth_lock = threading.Lock()
        self._slots = threading.Semaphore(self.max_events)

    def event_done(self) -> None:
        """The fan-out finished one event (frees a slot for the engine)."""
        self._slots.release()

    @property
    def depth(self) -> int:
        """Commands waiting for the engine thread."""
        return self._pending

    async def start(self) -> None:
        """Start the thread and wait until the engine is loaded and compiled."""
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="dcsm-engine", daemon=True)
        self._thread.start()
        while not self.ready.is_set():
            if self.error is not None:
                raise self.error
            await asyncio.sleep(0.02)

    def submit(self, cmd: Any) -> None:
        """Enqueue a command (from the loop thread, in seq order)."""
        with self._depth_lock:
            self._pending += 1
        self._commands.put(cmd)

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Let the thread finish every queued command, then end it (a daemon thread still
        busy after ``timeout_s`` is abandoned: the process is exiting)."""
        if self._thread is None:
            return
        self._commands.put(_STOP)
        thread, self._thread = self._thread, None
        deadline = time.monotonic() + timeout_s
        while thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if thread.is_alive():
            log.error("engine thread still busy after %.0fs; abandoning it", timeout_s)

    # -- thread side ---------------------------------------------------------------------

    def _emit(self, event: Any) -> None:
        assert self._loop is not None
        self._slots.acquire()
        self._loop.call_soon_threadsafe(self.events.put_nowait, event)

    def _take(self) -> Any:
        cmd = self._commands.get()
        with self._depth_lock:
            self._pending -= 1 if cmd is not _STOP else 0
        return cmd

    def _run(self) -> None:
        try:
            t0 = time.time()
            warm_up(self.backend)
            engine = make_engine(self.backend)
            if self.graph is not None and self.graph.num_vertices + self.graph.num_edges:
                engine.load_graph(self.graph)
            for qid, pattern, count_only in self.restore:
                engine.register(qid, pattern, from_seq=self.next_seq, count_only=count_only)
            self.graph = None  # the engine holds it now
            self.memory_bytes = engine.memory_bytes()
            self.backend_name = engine.backend
            log.info("engine %s ready in %.1fs", engine.backend, time.time() - t0)
        except BaseException as exc:  # reported by start(); the service exits
            self.error = exc
            return
        self.ready.set()
        carry: Any = None
        while True:
            cmd = carry if carry is not None else self._take()
            carry = None
            if cmd is _STOP:
                break
            if isinstance(cmd, Apply):
                parts = [cmd]
                size = len(cmd.batch)
                # Merge whatever else is already queued; stop at the first non-Apply.
                while size < self.max_batch_updates and not self._commands.empty():
                    nxt = self._take()
                    if not isinstance(nxt, Apply) or size + len(nxt.batch) > self.max_batch_updates:
                        carry = nxt
                        break
                    parts.append(nxt)
                    size += len(nxt.batch)
                try:
                    event: Any = self._apply(engine, parts)
                except Exception as exc:  # an engine bug: fail these updates, keep serving
                    log.exception("engine.apply failed on %d updates", size)
                    event = Failed(parts, exc)
                self._emit(event)
            else:
                self._emit(self._control(engine, cmd))
        engine.close()

    def _apply(self, engine: Engine, parts: list[Apply]) -> Applied:
        origins = []
        start = 0
        for p in parts:
            origins.append((start, start + len(p.batch), p.origin))
            start += len(p.batch)
        batch = parts[0].batch if len(parts) == 1 else UpdateBatch.concat([p.batch for p in parts])
        result = engine.apply(batch)
        self.memory_bytes = engine.memory_bytes()
        return Applied(batch, result, origins)

    def _control(self, engine: Engine, cmd: Any) -> Any:
        try:
            if isinstance(cmd, Register):
                event = Registered(cmd)
                # Backfill reads the graph as it stands before from_seq: every earlier
                # update was applied (commands run in seq order), no later one yet.
                if cmd.backfill and cmd.count_only:
                    event.backfill_count = engine.count_static(cmd.pattern)
                elif cmd.backfill:
                    event.backfill_matches = engine.match_static(cmd.pattern)
                engine.register(cmd.qid, cmd.pattern, from_seq=cmd.from_seq,
                                count_only=cmd.count_only)  # fmt: skip
                return event
            if isinstance(cmd, Unregister):
                engine.unregister(cmd.qid, from_seq=cmd.from_seq)
                return Done(cmd)
            if isinstance(cmd, Export):
                return Exported(cmd, engine.export_graph(), cmd.at_seq)
            return Done(cmd)
        except Exception as exc:  # reported to whoever asked; the engine goes on
            log.warning("engine command %s failed: %s", type(cmd).__name__, exc)
            return Failed(cmd, exc)
