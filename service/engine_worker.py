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
import dataclasses
import logging
import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from dcsm.engine import Engine, make_engine, warm_up
from dcsm.engine.snapshot import MatchSnapshot, StaticSnapshot
from dcsm.errors import EngineStopped
from dcsm.model import Graph, Pattern, UpdateBatch

from .backfill import Backfiller, carried
from .messages import (
    Applied,
    Apply,
    ApplyFailed,
    Barrier,
    BarrierReached,
    Command,
    ControlFailed,
    Event,
    Export,
    Exported,
    Register,
    Registered,
    Slice,
    Unregister,
    Unregistered,
)

log = logging.getLogger("dcsm.service.engine")

_STOP = object()
#: Most updates merged into one engine call when the setting is 0 (measured: the GPU engine
#: holds 2x its sustainable rate with 32K, bench/results/service/RESULTS.md; the CPU engine
#: keeps its output smooth with 8K).
GPU_BATCH_UPDATES, CPU_BATCH_UPDATES = 32768, 8192


@dataclass
class EngineWorker:
    """Owns the engine and its thread.

    Args:
        backend: make_engine backend name.
        events: loop-side queue the events go to (unbounded; ``max_events`` bounds it).
        graph: initial graph to bulk-load (a restored snapshot or --graph), or None.
        restore: (qid, pattern, count_only, max_deltas) of queries to re-register at
            ``next_seq``.
        next_seq: seq of the first update this engine will see.
        max_batch_updates: most updates per engine.apply call (0: by backend, above).
        gpu_options: capacities and batching of the GPU engine (``GpuEngine`` keyword
            arguments).
        backfill_threads: threads that run backfills beside the stream.
        backfill_mode: ``auto``: beside the stream where the engine has snapshots (the CPU
            engine), inline otherwise (the GPU engine's device matcher); ``beside``: always
            (the GPU engine built with room for a second device matcher beside its
            persistent kernel, ``static_beside``); ``inline``: on this thread.

    When the engine stops for good (:class:`EngineStopped`) the thread ends, ``error`` holds
    the reason and ``halted`` is set: the service then stops without a checkpoint.
    """

    backend: str
    events: asyncio.Queue[Event]
    graph: Graph | None = None
    restore: list[tuple[int, Pattern, bool, int | None]] = field(default_factory=list)
    next_seq: int = 0
    max_batch_updates: int = 0
    gpu_options: dict[str, float] = field(default_factory=dict)
    max_events: int = 64
    backfill_threads: int = 1  # threads running backfills beside the stream (service/backfill.py)
    backfill_mode: str = "auto"  # auto, beside or inline (Settings.backfill_mode)
    memory_bytes: int = 0
    backend_name: str = ""
    ready: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    _commands: queue.SimpleQueue[Command | object] = field(default_factory=queue.SimpleQueue)
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

    def launch(self) -> None:
        """Start the thread (from the loop): the engine loads and compiles while the
        caller goes on with the rest of its start; :meth:`start` waits for it."""
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        self.halted = asyncio.Event()
        self._thread = threading.Thread(target=self._run, name="dcsm-engine", daemon=True)
        self._thread.start()

    async def start(self) -> None:
        """Launch the thread unless :meth:`launch` did, and wait until the engine is
        loaded and compiled."""
        self.launch()
        while not self.ready.is_set():
            if self.error is not None:
                raise self.error
            await asyncio.sleep(0.02)

    def submit(self, cmd: Command) -> None:
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

    def _emit(self, event: Event) -> None:
        assert self._loop is not None
        self._slots.acquire()
        self._loop.call_soon_threadsafe(self.events.put_nowait, event)

    def _take(self) -> Command | object:
        cmd = self._commands.get()
        with self._depth_lock:
            self._pending -= 1 if cmd is not _STOP else 0
        return cmd

    def _run(self) -> None:
        try:
            t0 = time.time()
            warm_up(self.backend)
            options = dict(self.gpu_options)
            if self.backfill_mode == "beside":  # the GPU engine leaves room for backfills
                options["static_beside"] = True
            engine = make_engine(self.backend, gpu_options=options)
            if not self.max_batch_updates:
                gpu = engine.backend == "gpu"
                self.max_batch_updates = GPU_BATCH_UPDATES if gpu else CPU_BATCH_UPDATES
            if self.graph is not None and self.graph.num_vertices + self.graph.num_edges:
                engine.load_graph(self.graph)
            for qid, pattern, count_only, max_deltas in self.restore:
                engine.register(
                    qid, pattern, from_seq=self.next_seq, count_only=count_only,
                    max_deltas=max_deltas,
                )  # fmt: skip
            self.graph = None  # the engine holds it now
            self.memory_bytes = engine.memory_bytes()
            self.backend_name = engine.backend
            log.info("engine %s ready in %.1fs", engine.backend, time.time() - t0)
        except BaseException as exc:  # reported by start(); the service exits
            self.error = exc
            return
        backfiller = Backfiller(self._emit, self.backfill_threads)
        self.ready.set()
        carry: Command | object | None = None
        while True:
            cmd = carry if carry is not None else self._take()
            carry = None
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
                event: Event
                try:
                    event = self._apply(engine, parts)
                except EngineStopped as exc:  # nothing more can be applied: stop, unsettled
                    self._halt(exc)
                    break
                except Exception as exc:  # an engine bug: fail these updates, keep serving
                    log.exception("engine.apply failed on %d updates", size)
                    event = ApplyFailed(parts, exc)
                self._emit(event)
            elif isinstance(cmd, Register | Unregister | Export | Barrier):
                if isinstance(cmd, Unregister):  # its backfill, if still running, comes first
                    backfiller.wait(cmd.qid)
                event = self._control(engine, cmd, backfiller)
                self._emit(event)
                if isinstance(event, Registered) and event.backfill_job is not None:
                    backfiller.start(event.backfill_job)  # after Registered: it goes first
                if isinstance(event, ControlFailed) and isinstance(event.error, EngineStopped):
                    self._halt(event.error)
                    break
            else:  # _STOP
                break
        backfiller.close()
        try:
            engine.close()
        except EngineStopped as exc:
            log.warning("engine close: %s", exc)

    def _halt(self, exc: EngineStopped) -> None:
        log.error("%s: the service stops; a restart replays the updates since the last "
                  "checkpoint", exc)  # fmt: skip
        self.error = exc
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self.halted.set)

    def _apply(self, engine: Engine, parts: list[Apply]) -> Applied:
        slices = []
        start = 0
        for p in parts:
            slices.append(Slice(start, start + len(p.batch), p.origin))
            start += len(p.batch)
        batch = parts[0].batch if len(parts) == 1 else UpdateBatch.concat([p.batch for p in parts])
        received = np.repeat([p.received for p in parts], [len(p.batch) for p in parts])
        # The engine schedules by when updates reached the service (the GPU engine closes a
        # batch early for updates that have waited); the frames keep the arrival times.
        result = engine.apply(dataclasses.replace(batch, ts=received))
        self.memory_bytes = engine.memory_bytes()
        return Applied(batch, result, slices, received)

    def _snapshot(self, engine: Engine) -> MatchSnapshot | None:
        """What a backfill beside the stream runs on; None: it runs inline."""
        if self.backfill_mode == "inline":
            return None
        snapshot = engine.static_snapshot()
        if snapshot is None and self.backfill_mode == "beside":
            snapshot = StaticSnapshot.from_graph(engine.export_graph())
        return snapshot

    def _control(
        self, engine: Engine, cmd: Register | Unregister | Export | Barrier, backfiller: Backfiller
    ) -> Event:
        if isinstance(cmd, Barrier):
            return BarrierReached(cmd)
        try:
            if isinstance(cmd, Register | Unregister) and cmd.remote:
                # Another replica matches it: the catalog follows it, the engine never sees it.
                return Registered(cmd) if isinstance(cmd, Register) else Unregistered(cmd)
            if isinstance(cmd, Register):
                event = Registered(cmd)
                # Backfill reads the graph as it stands before from_seq: every earlier
                # update was applied (commands run in seq order), no later one yet.
                snapshot = self._snapshot(engine) if cmd.backfill else None
                if snapshot is not None:
                    event.backfill_job = backfiller.job(cmd, snapshot)
                elif cmd.backfill and cmd.count_only:
                    event.backfill_count = carried(cmd.pattern, engine.count_static(cmd.pattern))
                elif cmd.backfill:
                    event.backfill_matches = engine.match_static(cmd.pattern)
                engine.register(cmd.qid, cmd.pattern, from_seq=cmd.from_seq,
                                count_only=cmd.count_only, max_deltas=cmd.max_deltas)  # fmt: skip
                return event
            if isinstance(cmd, Unregister):
                engine.unregister(cmd.qid, from_seq=cmd.from_seq)
                return Unregistered(cmd)
            t0 = time.perf_counter()
            graph = engine.export_graph()
            return Exported(cmd, graph, time.perf_counter() - t0)
        except Exception as exc:  # reported to whoever asked; the engine goes on
            log.warning("engine command %s failed: %s", type(cmd).__name__, exc)
            return ControlFailed(cmd, exc)
