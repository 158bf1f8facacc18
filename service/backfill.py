"""Backfill beside the stream: the static matches of a query registered with
``?backfill=true`` are computed in threads of their own while the engine thread goes on
applying updates.

When the engine thread reaches the registration (at its ``from_seq``) it takes a
:class:`~dcsm.engine.snapshot.MatchSnapshot` of the graph as it stands then, registers the
query, hands the fan-out a :class:`~dcsm.service.messages.Registered` event carrying the
:class:`BackfillJob` and only then starts the job here. The job cuts the snapshot's roots
into slices (``slices``: on the host, vertices of about equal degree sums, the rule the
engine's own static matching uses; on the device, ranges of start edges) that ``threads``
threads run (the CPU kernels release the GIL; the device snapshot runs one slice at a
time on its own CUDA stream), and hands one :class:`~dcsm.service.messages.BackfillDone`
event to the events queue when every slice is done, through the engine worker's ``emit``
(so it takes an event slot like any other event). In embeddings mode without a cap, the
rows of the slices done so far in slice order go out meanwhile as
:class:`~dcsm.service.messages.BackfillPart` events and are dropped here, so memory holds
the slices in flight, not the whole backfill. Meanwhile the fan-out holds the query's live
deltas; it sends the parts as they come and, on ``BackfillDone``, the rest of the backfill
and then what it held, in seq order: subscribers see the rows an inline backfill gives, in
the same order, while every other query's updates flow on.

The GPU engine backfills inline on its device matcher, as the engine thread's own step,
unless ``backfill_mode`` is ``beside``: then it is built with room beside its persistent
kernel (``static_beside``) and its snapshot is a device copy matched here by a second
device matcher while the kernel applies updates (``dcsm.gpu.device_snapshot``).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

import numpy as np

from dcsm.engine.snapshot import MatchSnapshot
from dcsm.errors import EngineError
from dcsm.model import Pattern

from .messages import BackfillDone, BackfillPart, Event, Register

log = logging.getLogger("dcsm.service.backfill")

#: Slices per backfill thread: enough to spread hubs over the threads and to show progress.
SLICES_PER_THREAD = 16
#: The largest count a count frame carries (int64): a counted backfill may pass it (a fan-out
#: of a hub counts past 2^64), and is then refused rather than sent wrong.
COUNT_MAX = (1 << 63) - 1


def carried(pattern: Pattern, count: int) -> int:
    """``count``, if a count frame can carry it; else a clear :class:`EngineError` (for an
    inline backfill the registration is refused; beside the stream the backfill ends with
    it, as with any backfill error)."""
    if count > COUNT_MAX:
        raise EngineError(
            f"pattern {pattern.name!r}: its backfill counts {count:,} matches, past 2^63 - 1, "
            "which a count frame (int64) cannot carry; register it without a backfill (its "
            "live counts are per update)"
        )
    return count


class BackfillJob:
    """The backfill of one registration over one snapshot; ``progress`` (0..1) is read by
    the API while it runs."""

    def __init__(self, cmd: Register, snapshot: MatchSnapshot, slices: int) -> None:
        self.cmd = cmd
        self.snapshot = snapshot
        # Slices of about equal work (degree sums), as the engine's own static matching.
        self.bounds, self._work = snapshot.slices(slices)
        self.started = time.time()
        self._results: list[tuple[int, np.ndarray] | None] = [None] * (len(self.bounds) - 1)
        self._work_done = 0
        self._left = len(self._results)
        self._lock = threading.Lock()
        self.finished = threading.Event()
        # Embeddings without a cap stream out in parts: the slices before _shipped went out.
        self.streams = not cmd.count_only and cmd.max_deltas is None
        self._shipped = 0
        self._emitting = threading.Lock()  # parts and the final event leave in slice order

    @property
    def progress(self) -> float:
        """The share of the work (degree sums of the roots) in slices done."""
        total = int(self._work[-1])
        return self._work_done / total if total else (0.0 if self._left else 1.0)

    def run_slice(self, i: int) -> bool:
        """Run slice ``i``; True if it was the last one left."""
        lo, hi = int(self.bounds[i]), int(self.bounds[i + 1])
        # Each slice keeps at most the rows the query ships (its cap): the first rows overall
        # are those of the first slices, so memory stays bounded whatever the match count.
        cmd = self.cmd
        result = self.snapshot.run(cmd.pattern, lo, hi, not cmd.count_only, cmd.max_deltas)
        with self._lock:
            self._results[i] = result
            self._work_done += int(self._work[i + 1] - self._work[i])
            self._left -= 1
            return self._left == 0

    def ship_ready(self, emit: Callable[[Event], None]) -> int:
        """Embeddings without a cap: emit the rows of the slices done in a row since the last
        part as one :class:`BackfillPart` and drop them here (their counts stay). The last
        slices' rows are left to :meth:`hand_over`. Returns the rows emitted."""
        if not self.streams:
            return 0
        with self._emitting:
            with self._lock:
                if self.finished.is_set():
                    return 0
                k = self._shipped
                while k < len(self._results) and self._results[k] is not None:
                    k += 1
                if k == len(self._results):  # every slice is done: the BackfillDone carries it
                    return 0
                empty = np.empty((0, self.cmd.pattern.num_vertices), np.int64)
                parts = []
                for j in range(self._shipped, k):
                    done = self._results[j]
                    assert done is not None
                    if len(done[1]):
                        parts.append(done[1])
                    self._results[j] = (done[0], empty)
                self._shipped = k
            if not parts:
                return 0
            rows = np.concatenate(parts)
            emit(BackfillPart(self.cmd, rows))
            return len(rows)

    def hand_over(self, emit: Callable[[Event], None] | None, error: BaseException | None) -> bool:
        """Emit the job's one :class:`BackfillDone` (unless ``emit`` is None: the service is
        stopping), then mark it finished; False if it already was."""
        with self._emitting, self._lock:
            if self.finished.is_set():
                return False
            if emit is not None:
                emit(self.outcome(error))
            self.finished.set()  # only now: wait() must not return before the event is out
            return True

    def outcome(self, error: BaseException | None) -> BackfillDone:
        """The event for the fan-out, once every slice ran (or one failed)."""
        seconds = time.time() - self.started
        if error is not None:
            return BackfillDone(self.cmd, seconds=seconds, error=error)
        parts = [r for r in self._results if r is not None]
        try:
            count = carried(self.cmd.pattern, sum(c for c, _ in parts))
        except EngineError as exc:
            return BackfillDone(self.cmd, seconds=seconds, error=exc)
        if self.cmd.count_only:
            return BackfillDone(self.cmd, count=count, seconds=seconds)
        n = self.cmd.pattern.num_vertices
        matches = np.concatenate([m for _, m in parts]) if parts else np.empty((0, n), np.int64)
        matches = matches[: self.cmd.max_deltas]  # the cap, if any (the count stays whole)
        return BackfillDone(self.cmd, count=count, matches=matches, seconds=seconds)


class Backfiller:
    """Runs :class:`BackfillJob` slices on ``threads`` daemon threads (a slice cannot be
    interrupted; a stopping service must not wait for one); each job ends with one
    ``emit(BackfillDone)``, called from the thread that ran its last slice."""

    def __init__(self, emit: Callable[[Event], None], threads: int) -> None:
        self._emit = emit
        self.threads = max(1, threads)
        self._work: queue.SimpleQueue[tuple[BackfillJob, int] | None] = queue.SimpleQueue()
        self._jobs: dict[int, BackfillJob] = {}
        self._closed = False
        for k in range(self.threads):
            name = f"dcsm-backfill-{k}"
            threading.Thread(target=self._serve, name=name, daemon=True).start()

    def job(self, cmd: Register, snapshot: MatchSnapshot) -> BackfillJob:
        return BackfillJob(cmd, snapshot, self.threads * SLICES_PER_THREAD)

    def start(self, job: BackfillJob) -> None:
        self._jobs[job.cmd.qid] = job
        for i in range(len(job.bounds) - 1):
            self._work.put((job, i))
        if len(job.bounds) == 1:  # an empty graph: nothing to run
            self._finish(job, None)

    def wait(self, qid: int) -> None:
        """Block until the job of ``qid`` (if any) has handed over its event: what the engine
        thread does before it unregisters the query, so the backfill always comes first."""
        job = self._jobs.get(qid)
        if job is not None:
            job.finished.wait()

    def close(self) -> None:
        """Drop every job still running (the service is stopping: nothing is emitted)."""
        self._closed = True
        for _ in range(self.threads):
            self._work.put(None)

    def _serve(self) -> None:
        while (item := self._work.get()) is not None:
            job, i = item
            if self._closed or job.finished.is_set():
                continue
            try:
                last = job.run_slice(i)
            except BaseException as exc:  # an engine bug or no memory: the registration says so
                log.exception("backfill of query %d failed", job.cmd.qid)
                self._finish(job, exc)
                continue
            if last:
                self._finish(job, None)
            elif not self._closed:
                job.ship_ready(self._emit)

    def _finish(self, job: BackfillJob, error: BaseException | None) -> None:
        if job.hand_over(None if self._closed else self._emit, error):
            self._jobs.pop(job.cmd.qid, None)
