"""``dcsm demo``: the whole service on one machine, no GPU, no Kafka install, no data files.

It starts a loopback tansu broker (unless ``--broker`` names one), runs the service in this
process, registers a few patterns, streams a seeded power-law labelled graph (insertions and
deletions; ``--graph FILE`` streams a real graph instead) through Kafka at ``--rate`` updates
per second with exponential inter-arrival times, watches every query over websockets, shows
live matches, throughput and latency percentiles, and shuts everything down.

The last line it prints is ``summary: {json}`` with the per-query totals seen on the
websockets, which the tests compare against the CPU engine run directly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dcsm.client import AsyncClient, Count, Delta, Gap, Item
from dcsm.errors import DcsmError
from dcsm.graphio import read_graph
from dcsm.loadgen.producer import arrival_offsets, layout, produce_paced
from dcsm.loadgen.synth import powerlaw_stream, stream_from_graph
from dcsm.model import Pattern, UpdateBatch
from dcsm.stats import percentiles

from .broker import TansuBroker, free_port
from .errors import ConfigError
from .logs import configure_logging, uvicorn_log_config
from .settings import Settings
from .stopping import StopOnSignal
from .tasks import cancel_and_wait

#: Seconds without a processed update, while some are still due, before the demo gives up.
STALL_S = 120.0
MAX_DEMO_UPDATES = 100_000_000  # a stream generated in memory: ~25 bytes an update


class DemoStalled(DcsmError):
    """The demo's service stopped processing (the line says where and its status)."""


def _edges(*pairs: tuple[int, int]) -> list[tuple[int, int, int | None]]:
    return [(u, v, None) for u, v in pairs]


# (pattern, mode): small patterns whose match volume a terminal can follow at the default rate.
_ANY3: list[int | None] = [None] * 3
_ANY4: list[int | None] = [None] * 4
_TRI = _edges((0, 1), (1, 2), (0, 2))
_SQUARE = _edges((0, 1), (1, 2), (2, 3), (0, 3))
DEMO_QUERIES: list[tuple[Pattern, str]] = [
    (Pattern.build("triangle", _ANY3, _TRI, distinct=True), "embeddings"),
    (Pattern.build("rgb-triangle", [0, 1, 2], _TRI), "embeddings"),
    (Pattern.build("diamond", _ANY4, _SQUARE + _edges((0, 2)), distinct=True), "embeddings"),
    (Pattern.build("square", _ANY4, _SQUARE, distinct=True), "count"),
]


def demo_stream(args: argparse.Namespace) -> UpdateBatch:
    """The updates the demo sends (deterministic for given arguments)."""
    n = max(1, int(args.rate * args.duration))
    if args.graph:
        stream = stream_from_graph(read_graph(args.graph), seed=args.seed)
        return stream.slice(0, min(n, len(stream)))
    return powerlaw_stream(args.vertices, n, num_labels=args.labels, seed=args.seed, gamma=2.5)


@dataclass
class QueryView:
    name: str
    mode: str
    plus: int = 0
    minus: int = 0
    latency: deque = field(default_factory=lambda: deque(maxlen=20_000))  # arrival -> received
    recent: deque = field(default_factory=lambda: deque(maxlen=3))
    gaps: int = 0

    def take(self, item: Item) -> None:
        if isinstance(item, Gap):
            self.gaps += item.dropped
            return
        if not isinstance(item, Delta | Count):
            return
        n = item.count if isinstance(item, Count) else 1
        if item.sign > 0:
            self.plus += n
        else:
            self.minus += n
        self.latency.append(item.received_at - item.arrival_ts)
        if isinstance(item, Delta):
            self.recent.append(("+" if item.sign > 0 else "-") + str(list(item.match)))

    def percentiles(self) -> tuple[float, float, float] | None:
        p = percentiles(np.fromiter(self.latency, float), 1000)
        if p["p50"] is None:
            return None
        return p["p50"], p["p95"], p["p99"]  # type: ignore[return-value]


async def _watch(client: AsyncClient, view: QueryView) -> None:
    async for item in client.subscribe(view.name, counts=view.mode == "count", reconnect=False):
        view.take(item)


async def _produce(bootstrap: str, topic: str, batch: UpdateBatch, rate: float, seed: int,
                   progress: dict[str, float]) -> None:  # fmt: skip
    """Send ``batch`` with exponential inter-arrival times at ``rate``, each update stamped
    with its scheduled time as ``ts``; what is due within 5 ms goes as one JSON-array record."""
    offsets = arrival_offsets(len(batch), rate, seed)
    plan = layout(batch, offsets, "json", window_s=0.005)
    t0 = time.time() + 0.05
    records = plan.stamp(t0)
    await produce_paced(
        bootstrap, topic, records.values, t0 + records.send_at, sizes=records.sizes,
        on_sent=lambda k: progress.__setitem__("sent", k), linger_ms=1,
    )  # fmt: skip


def _render(views: list[QueryView], status: dict[str, Any], progress: dict[str, float], total: int,
            elapsed: float, bootstrap: str) -> Any:  # fmt: skip
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table

    processed = status.get("processed_seq", -1) + 1
    head = Table.grid(padding=(0, 2))
    head.add_row(
        f"[b]broker[/] {bootstrap}",
        f"[b]sent[/] {int(progress.get('sent', 0))}/{total}",
        f"[b]processed[/] {processed}",
        f"[b]throughput[/] {processed / max(elapsed, 1e-9):,.0f} upd/s",
        f"[b]queued[/] {status.get('queued_updates', 0)}",
    )
    t = Table(title="live queries", expand=True)
    for col in ("query", "mode", "+", "-", "p50 ms", "p95 ms", "p99 ms", "latest matches"):
        t.add_column(col, justify="right" if col in ("+", "-") or "ms" in col else "left")
    for v in views:
        p = v.percentiles()
        lat = [f"{x:.1f}" for x in p] if p else ["-", "-", "-"]
        recent = " ".join(v.recent) if v.mode == "embeddings" else "(counts only)"
        t.add_row(v.name, v.mode, f"{v.plus:,}", f"{v.minus:,}", *lat, recent)
    note = "latency: update's send time (its ts) -> frame received by this websocket client"
    return Group(Panel(head, title="dcsm demo"), t, f"[dim]{note}[/]")


def run_demo(args: argparse.Namespace) -> int:
    configure_logging("warning")
    stopper = StopOnSignal(lambda sig: None)
    try:
        return asyncio.run(_demo(args, stopper))
    except asyncio.CancelledError:  # Ctrl-C or SIGTERM, everything stopped
        return stopper.exit_code
    finally:
        stopper.uninstall()


async def _demo(args: argparse.Namespace, stopper: StopOnSignal) -> int:
    """The demo, after SIGINT/SIGTERM handlers that cancel it (and, should that not end it
    within the grace period, kill the broker and exit)."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    assert main is not None

    def cancel(sig: int) -> None:
        loop.call_soon_threadsafe(main.cancel)

    stopper.on_first = cancel
    stopper.install()
    broker = None if args.broker else TansuBroker()
    if broker is not None:
        stopper.kills.append(broker.kill)
    try:
        return await _demo_with(args, broker)
    finally:
        if broker is not None:  # after the service's Kafka clients have stopped
            broker.stop()


async def _demo_with(args: argparse.Namespace, broker: TansuBroker | None) -> int:
    import uvicorn
    from rich.console import Console
    from rich.live import Live

    from .api import create_app
    from .app import Service

    console = Console()
    if args.rate * args.duration > MAX_DEMO_UPDATES:  # each finite and > 0 (the parser's)
        raise ConfigError(f"--rate x --duration: at most {MAX_DEMO_UPDATES:,} updates")
    batch = demo_stream(args)
    prefix = "dcsm"
    if broker is None:
        bootstrap = args.broker
        prefix = f"dcsm.demo-{int(time.time())}"  # fresh topics on a shared broker
    else:
        console.print("starting a loopback Kafka broker (tansu, in memory) ...")
        await asyncio.to_thread(broker.start)
        bootstrap = broker.bootstrap
    port = args.port or free_port()
    settings = Settings(
        port=port, kafka=bootstrap, backend=args.backend, state_dir=None, log_level="warning",
        updates_topic=f"{prefix}.updates", matches_topic=f"{prefix}.matches",
        dead_letter_topic=f"{prefix}.dead-letter", consumer_group=f"{prefix}.demo",
        kafka_acks="all" if args.broker else "1",  # tansu: one broker, and slow with all
    )  # fmt: skip
    service = Service(settings)
    config = uvicorn.Config(
        create_app(service), host="127.0.0.1", port=port, log_level="warning",
        log_config=uvicorn_log_config("warning"), lifespan="on", ws="websockets-sansio",
        timeout_graceful_shutdown=3,
    )  # fmt: skip

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # SIGINT and SIGTERM are StopOnSignal's

    server = Server(config)
    server_task = asyncio.create_task(server.serve())
    base = f"http://127.0.0.1:{port}"
    tasks: list[asyncio.Task] = []
    views: list[QueryView] = []
    status: dict[str, Any] = {}
    progress: dict[str, float] = {"sent": 0}
    try:
        console.print(f"starting the service on {base} (engine warm-up) ...")
        console.print(f"live page: {base}/ (API docs: {base}/docs)", soft_wrap=True)
        async with AsyncClient(base, timeout_s=30) as c:
            deadline = time.monotonic() + 180
            while True:
                if service.fatal:
                    raise ConfigError(f"the service could not start: {service.fatal}")
                if await c.ready():
                    break
                if time.monotonic() > deadline:
                    raise ConfigError("the service was not ready within 180 s")
                await asyncio.sleep(0.1)
            for pattern, mode in DEMO_QUERIES:
                await c.register_query(pattern, mode=mode)  # type: ignore[arg-type]
                view = QueryView(pattern.name, mode)
                views.append(view)
                tasks.append(asyncio.create_task(_watch(c, view)))
            topic = settings.updates_topic
            console.print(f"streaming {len(batch):,} updates at {args.rate:,.0f}/s to {topic}")
            t0 = time.monotonic()
            producer = asyncio.create_task(
                _produce(bootstrap, settings.updates_topic, batch, args.rate, args.seed, progress)
            )
            tasks.append(producer)

            progressed = [-1, time.monotonic()]  # the last processed_seq seen, and when

            async def refresh() -> bool:
                """Whether every update is processed; raises if the producer failed or the
                service stopped making progress."""
                status.update((await c.status()).raw)
                if producer.done() and producer.exception() is not None:
                    raise producer.exception()  # type: ignore[misc]
                seq = status["processed_seq"]
                if seq >= len(batch) - 1 and producer.done():
                    return True
                now = time.monotonic()
                if seq != progressed[0]:
                    progressed[:] = [seq, now]
                elif now - progressed[1] > STALL_S:
                    raise DemoStalled(
                        f"the service processed nothing for {STALL_S:.0f}s: at update "
                        f"{seq + 1:,} of {len(batch):,}, {progress['sent']:,.0f} sent; "
                        f"status: {json.dumps(status)}"
                    )
                return False

            stop_at = None
            if args.plain or not console.is_terminal:
                next_line = 0.0
                while not server.should_exit:
                    done = await refresh()
                    if time.monotonic() >= next_line or done:
                        next_line = time.monotonic() + 1
                        _print_plain(
                            console, views, status, progress, len(batch), time.monotonic() - t0
                        )
                    if done:
                        break
                    await asyncio.sleep(0.2)
            else:
                with Live(console=console, refresh_per_second=4) as live:
                    while not server.should_exit:
                        done = await refresh()
                        live.update(_render(views, status, progress, len(batch),
                                            time.monotonic() - t0, bootstrap))  # fmt: skip
                        if done:
                            stop_at = stop_at or time.monotonic() + 1.0
                            if time.monotonic() >= stop_at:
                                break
                        await asyncio.sleep(0.25)
            await asyncio.sleep(0.5)  # last frames in flight to the websockets
        elapsed = time.monotonic() - t0
        processed = status.get("processed_seq", -1) + 1
        console.print(
            f"done: {processed:,} updates in {elapsed:.1f}s ({processed / elapsed:,.0f}/s); "
            "per-query latency is send time -> websocket receipt"
        )
        summary = {
            "updates": processed,
            "queries": {v.name: {"+": v.plus, "-": v.minus, "gaps": v.gaps} for v in views},
        }
        print("summary: " + json.dumps(summary), flush=True)
        return 0
    finally:
        await cancel_and_wait(tasks)
        server.should_exit = True
        await asyncio.gather(server_task, return_exceptions=True)


def _print_plain(console: Any, views: list[QueryView], status: dict[str, Any],
                 progress: dict[str, float], total: int, elapsed: float) -> None:  # fmt: skip
    processed = status.get("processed_seq", -1) + 1
    parts = [f"t={elapsed:5.1f}s sent={int(progress.get('sent', 0))}/{total} processed={processed}"]
    for v in views:
        p = v.percentiles()
        lat = f" p50/p95/p99={p[0]:.1f}/{p[1]:.1f}/{p[2]:.1f}ms" if p else ""
        parts.append(f"{v.name}: +{v.plus} -{v.minus}{lat}")
    console.print(" | ".join(parts), highlight=False, soft_wrap=True)
