"""Producer processes: one rate step's records sent by several processes at once.

One Python process running aiokafka tops out well below the rates the service is meant to
take (and the load generator's readers need a core of their own), so ``dcsm loadgen`` sends
through a pool of ``N`` producer processes, each with its own event loop and
``AIOKafkaProducer``. A step goes in three phases, so that nothing but sending happens once
the clock starts:

1. **prepare**: the parent cuts the step's updates into time-window records
   (:func:`~dcsm.loadgen.producer.window_bounds`) and deals them out round-robin (record ``j``
   to process ``j mod N``: every process sends an interleaved share of the whole schedule).
   Each process encodes what it can without the start time (the JSON text of every update)
   and times stamping a sample of its records.
2. **go**: once every process is ready, the parent picks the shared start ``t0`` far enough
   ahead for the slowest process to stamp all its records (each update's ``ts`` is
   ``t0 +`` its due time) and sends it to all.
3. **send**: each process sends its records at their times
   (:func:`~dcsm.loadgen.producer.send_paced`) and reports a
   :class:`~dcsm.loadgen.producer.SendReport`.

Records of different processes interleave on the topic in whatever order the broker gets
them; latency does not depend on that order, since every frame carries its update's ``ts``.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import time
import traceback
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from dcsm.client import PRODUCER_OPTIONS, UpdateProducer
from dcsm.model import UpdateBatch

from .producer import SendReport, layout, send_paced, window_bounds

#: Seconds between the last process being ready and t0, on top of the stamping estimate.
START_MARGIN_S = 0.15


@dataclass(frozen=True)
class StepSend:
    """What the pool did for one step: the shared start ``t0`` (epoch seconds) and each
    process's report."""

    t0: float
    reports: list[SendReport]

    @property
    def updates(self) -> int:
        return sum(r.updates for r in self.reports)

    @property
    def t_done(self) -> float:
        """When the last process finished its final flush (epoch seconds)."""
        return max((r.t_done for r in self.reports), default=self.t0)

    @property
    def max_late_s(self) -> float:
        return max((r.max_late_s for r in self.reports), default=0.0)

    def send_rate(self) -> float:
        """Updates per second from t0 to the last flush."""
        return self.updates / max(self.t_done - self.t0, 1e-9)


def deal(bounds: np.ndarray, k: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Process ``w``'s share of ``k``: records ``w, w+k, ...`` of the records ``bounds``
    (int64 (r+1,)) delimit. Returns the indices of their updates (int64, in order) and the
    record boundaries within that share (int64)."""
    rec = np.arange(w, len(bounds) - 1, k)
    lo, hi = bounds[rec], bounds[rec + 1]
    lens = hi - lo
    local = np.r_[0, np.cumsum(lens)].astype(np.int64)
    idx = np.repeat(lo - local[:-1], lens) + np.arange(local[-1])
    return idx.astype(np.int64), local


class ProducerPool:
    """``processes`` producer processes sending to ``topic`` on ``bootstrap``.

    ``start()`` spawns them (each connects its producer before it reports back),
    ``send_step()`` runs one step over ``use`` of them, ``stop()`` ends them."""

    def __init__(
        self, bootstrap: str, topic: str, processes: int, options: dict[str, Any] | None = None
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, got {processes}")
        self.bootstrap = bootstrap
        self.topic = topic
        self.processes = processes
        self.options = PRODUCER_OPTIONS | (options or {})
        self._procs: list[Any] = []
        self._conns: list[Connection] = []

    def start(self, timeout_s: float = 120.0) -> ProducerPool:
        ctx = mp.get_context("spawn")  # no fork of a process with threads and an event loop
        for _ in range(self.processes):
            parent, child = ctx.Pipe()
            p = ctx.Process(
                target=_worker, args=(child, self.bootstrap, self.topic, self.options),
                daemon=True, name="dcsm-loadgen-producer",
            )  # fmt: skip
            p.start()
            child.close()
            self._procs.append(p)
            self._conns.append(parent)
        for conn in self._conns:
            _expect(conn, "started", timeout_s)
        return self

    async def send_step(
        self,
        batch: UpdateBatch,
        offsets: np.ndarray,
        encoding: str,
        use: int | None = None,
        window_s: float = 0.001,
        max_updates: int = 10_000,
    ) -> StepSend:
        """Send ``batch`` (n updates due ``offsets`` seconds after a t0 chosen here,
        float64 (n,)) in ``encoding`` over ``use`` processes (default all)."""
        bounds = window_bounds(offsets, window_s, max_updates)
        k = max(1, min(use or self.processes, self.processes, len(bounds) - 1))
        conns = self._conns[:k]
        for w, conn in enumerate(conns):
            idx, local = deal(bounds, k, w)
            share = UpdateBatch(*(getattr(batch, f)[idx] for f in UpdateBatch.__dataclass_fields__))
            conn.send(("prepare", share, offsets[idx], local, encoding))
        ready = await asyncio.gather(*(_recv(c, "ready") for c in conns))
        t0 = time.time() + START_MARGIN_S + max(r[1] for r in ready)
        for conn in conns:
            conn.send(("go", t0))
        done = await asyncio.gather(*(_recv(c, "done") for c in conns))
        return StepSend(t0, [SendReport(**d[1]) for d in done])

    def stop(self, timeout_s: float = 10.0) -> None:
        for conn in self._conns:
            try:
                conn.send(("stop",))
            except (OSError, BrokenPipeError):
                pass
        for p in self._procs:
            p.join(timeout_s)
            if p.is_alive():
                p.kill()
                p.join()
        self._procs.clear()
        self._conns.clear()

    def __enter__(self) -> ProducerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _expect(conn: Connection, what: str, timeout_s: float) -> tuple[Any, ...]:
    try:
        if not conn.poll(timeout_s):
            raise TimeoutError(f"loadgen producer process: no {what!r} in {timeout_s:.0f} s")
        msg = conn.recv()
    except EOFError:
        raise RuntimeError("a loadgen producer process exited unexpectedly") from None
    if msg[0] == "error":
        raise RuntimeError(f"loadgen producer process failed:\n{msg[1]}")
    if msg[0] != what:
        raise RuntimeError(f"loadgen producer process: expected {what!r}, got {msg[0]!r}")
    return msg  # type: ignore[no-any-return]


async def _recv(conn: Connection, what: str, timeout_s: float = 3600.0) -> tuple[Any, ...]:
    return await asyncio.to_thread(_expect, conn, what, timeout_s)


# -- the producer process ------------------------------------------------------------------


def _worker(conn: Connection, bootstrap: str, topic: str, options: dict[str, Any]) -> None:
    import signal

    from dcsm.service.broker import _die_with_parent

    # The parent stops this process (a terminal's Ctrl-C reaches the whole group), and it
    # dies with the parent.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    try:
        asyncio.run(_serve(conn, bootstrap, topic, options))
    except Exception:
        conn.send(("error", traceback.format_exc()))


async def _serve(conn: Connection, bootstrap: str, topic: str, options: dict[str, Any]) -> None:
    import dcsm.service.codec  # noqa: F401 - imported now, not inside the timed stamping

    producer = UpdateProducer(bootstrap, topic, **options)
    await producer.start()
    conn.send(("started",))
    try:
        while True:
            msg = await asyncio.to_thread(conn.recv)
            if msg[0] == "stop":
                return
            _, share, offsets, bounds, encoding = msg
            plan = layout(share, offsets, encoding, bounds=bounds)
            # Time stamping a sample of the records, to tell the parent how long the real
            # thing takes once t0 is known.
            sample = min(len(plan), max(50, len(plan) // 20))
            t = time.perf_counter()
            plan.stamp(0.0, sample)
            estimate = (time.perf_counter() - t) * len(plan) / sample * 1.5
            conn.send(("ready", estimate))
            go = await asyncio.to_thread(conn.recv)
            t0 = float(go[1])
            records = plan.stamp(t0)
            report = await send_paced(
                producer, topic, records.values, t0 + records.send_at, sizes=records.sizes
            )
            conn.send(("done", asdict(report)))
    finally:
        await producer.stop()
