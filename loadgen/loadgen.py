"""``dcsm loadgen``: open-loop load against a running service, through Kafka.

For each target rate it replays the next slice of a stream file (CSM format, read with
:func:`dcsm.graphio.read_csm_stream`; default: a synthetic power-law stream) into the
updates topic with exponential inter-arrival times, from ``--producers`` processes
(:mod:`dcsm.loadgen.pool`), each update stamped with its scheduled send time as ``ts``. The
service reports that ``ts`` as the update's ``arrival_ts`` in every output frame, so per
update it measures:

* **end-to-end latency**: scheduled send time -> output frame received (no coordinated
  omission: a producer that falls behind shows as latency), once from the ``dcsm.matches``
  topic and once from a websocket (``e2e_kafka_ms``, ``e2e_websocket_ms``);
* **service latency** (``service_ms``): scheduled send time -> frame emitted by the service
  (the input path and the service, without the output path);

and per step: the achieved **send rate** (``send_rate``: updates / (last flush - t0)), the
**throughput** (updates processed / (time from t0 until the last was processed); if the
backlog does not drain within the drain deadline, those processed by then / the time to
then, and ``drained_after_send_s`` is None), ``processed``, the service's RSS at the end of
the step (``rss_bytes``) and the largest ``dcsm_consumer_lag`` seen during it.

Every update is observed, not only those that create matches: loadgen registers a probe
query, a single edge in count mode, whose count row follows every update that changes the
graph. The workload queries (``--queries`` CSM files; default a triangle, in ``--mode``) run
beside it. Both are registered with ``"encoding": "batch"`` by default (one frame per engine
batch, read with no per-update Python; ``--probe-encoding``/``--output-encoding json``: a
frame per row). A rate counts as *sustained* when the producers sent at least 95 % of it, the
service had no backlog left once they stopped (drained within the SLO), and the p99
end-to-end latency stayed under ``--slo-ms``.

Output: ``results.json`` and ``latency.png`` in ``--out``. ``--embedded`` starts its own
tansu broker and ``dcsm serve`` subprocess (``--backend``) on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from dcsm.argtypes import number, seed, whole
from dcsm.client import ApiError, AsyncClient
from dcsm.engine import device_name
from dcsm.errors import DcsmError
from dcsm.stats import percentiles

from .collect import FrameLatencies, metric_samples
from .pool import ProducerPool, StepSend
from .producer import arrival_offsets

PROBE = "_loadgen_probe"

#: Updates/s one producer process sends reliably (bench/results/loadgen/send_rate.md).
#: ``--producers auto`` uses ceil(rate / cap) processes for a step.
PRODUCER_CAP = {"binary": 2_000_000, "json": 500_000}


_positive = number(0)
_non_negative = number(0, or_equal=True)
_vertices = whole(3)  # a synthetic stream needs three


def _rates(text: str) -> list[float]:
    """``--rates``: comma-separated updates/s, each > 0."""
    rates = [_positive(x.strip()) for x in text.split(",") if x.strip()]
    if not rates:
        raise argparse.ArgumentTypeError("no rate given")
    return rates


def add_loadgen_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stream", metavar="FILE", help="CSM stream file (e/-e lines); default synthetic"
    )
    p.add_argument("--graph", metavar="FILE", help="with --embedded: initial graph for the service")
    p.add_argument("--queries", metavar="FILE", nargs="*", default=[], help="CSM query files")
    p.add_argument("--mode", choices=["embeddings", "count"], default="count",
                   help="how the workload queries report (default count)")  # fmt: skip
    p.add_argument("--rates", type=_rates, default="1000,2000,5000",
                   help="comma-separated updates/s")  # fmt: skip
    p.add_argument("--duration", type=_positive, default=10.0,
                   help="seconds per rate (default 10)")  # fmt: skip
    p.add_argument("--encoding", choices=["json", "binary"], default="binary",
                   help="input record encoding (default binary)")  # fmt: skip
    p.add_argument("--output-encoding", choices=["json", "batch"], default="batch",
                   help="workload queries' frames on dcsm.matches (default batch)")  # fmt: skip
    p.add_argument("--probe-encoding", choices=["json", "batch"], default="batch",
                   help="the latency probe's frames (default batch)")  # fmt: skip
    p.add_argument("--producers", default="auto",
                   help="producer processes: a number, or auto (one per "
                   f"{PRODUCER_CAP['binary']:,} binary / {PRODUCER_CAP['json']:,} JSON "
                   "updates/s of the step's rate)")  # fmt: skip
    p.add_argument("--linger-ms", type=_non_negative, default=5.0,
                   help="updates due within this many ms share one record, as a producer's "
                   "linger.ms batches them (default 5, librdkafka's default); latency still "
                   "counts from each update's own due time")  # fmt: skip
    p.add_argument("--service", default="http://127.0.0.1:8000", help="service base URL")
    p.add_argument("--kafka", metavar="HOST:PORT", help="broker (default: the service's own)")
    p.add_argument("--updates-topic", default="dcsm.updates")
    p.add_argument("--matches-topic", default="dcsm.matches")
    p.add_argument("--embedded", action="store_true",
                   help="start a loopback tansu broker and a dcsm serve subprocess")  # fmt: skip
    p.add_argument("--backend", choices=["auto", "cpu", "gpu"], default="auto",
                   help="with --embedded: the service's engine (default auto)")  # fmt: skip
    p.add_argument("--serve-arg", action="append", default=[], metavar="FLAG",
                   help="with --embedded: an extra dcsm serve argument (repeatable)")  # fmt: skip
    p.add_argument("--slo-ms", type=_positive, default=1000.0, help="p99 bound for 'sustained'")
    p.add_argument("--drain-s", type=_non_negative, default=None,
                   help="how long after sending a step may take to drain "
                   "(default max(30, 3 x duration))")  # fmt: skip
    p.add_argument("--out", default="loadgen-out", help="directory for results.json, latency.png")
    p.add_argument("--seed", type=seed, default=1)
    p.add_argument("--vertices", type=_vertices, default=20_000,
                   help="synthetic stream: vertices (at least 3)")  # fmt: skip


def producers_for(rate: float, encoding: str, flag: str) -> int:
    """Producer processes for a step at ``rate``: ``flag`` as a number, or by
    :data:`PRODUCER_CAP` when it is ``auto``."""
    if flag != "auto":
        n = int(flag)
        if n < 1:
            raise SystemExit("loadgen: --producers must be >= 1 or auto")
        return n
    return max(1, math.ceil(rate / PRODUCER_CAP[encoding]))


def _load_stream(args: argparse.Namespace, need: int) -> Any:
    from dcsm.graphio import read_csm_stream

    if args.stream:
        return read_csm_stream(args.stream)
    from .synth import powerlaw_stream

    return powerlaw_stream(args.vertices, need, num_labels=3, seed=args.seed, gamma=2.5)


def _queries(args: argparse.Namespace) -> list[tuple[Any, str, str]]:
    """(pattern, mode, encoding) of the probe and the workload queries."""
    from dcsm.graphio import read_csm_query
    from dcsm.model import Pattern

    edge = Pattern.build(PROBE, [None, None], [(0, 1, None)])
    out = [(edge, "count", args.probe_encoding)]
    if args.queries:
        out += [(read_csm_query(q), args.mode, args.output_encoding) for q in args.queries]
    else:
        tri = Pattern.build("triangle", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
        out.append((tri, args.mode, args.output_encoding))
    return out


async def _register(client: AsyncClient, pattern: Any, mode: Any, encoding: Any) -> str:
    """Register one query; the encoding it got. A service that predates output encodings
    (422 naming ``encoding``) gets the query without one: per-row JSON frames."""
    try:
        await client.register_query(pattern, mode=mode, encoding=encoding)
    except ApiError as exc:
        if exc.status == 409:  # registered by an earlier run
            return str(encoding)
        if exc.status != 422 or "encoding" not in f"{exc.message} {exc.details}":
            raise SystemExit(f"loadgen: registering {pattern.name} failed: {exc}") from None
        print(f"loadgen: warning: the service takes no output encoding; {pattern.name} "
              "gets per-row JSON frames", file=sys.stderr, flush=True)  # fmt: skip
        try:
            await client.register_query(pattern, mode=mode)
        except ApiError as again:
            if again.status != 409:
                raise SystemExit(f"loadgen: registering {pattern.name} failed: {again}") from None
        encoding = "json"
    return str(encoding)


class _Sampler:
    """Polls ``/metrics`` while a step runs: the largest consumer lag, the last RSS."""

    def __init__(self, client: AsyncClient, every_s: float = 0.2) -> None:
        self.client = client
        self.every_s = every_s
        self.max_lag: float | None = None
        self.rss: float | None = None
        self.deltas: list[float] = []  # dcsm_deltas_total summed over queries, per sample
        self.checkpoints: dict[str, float] = {}  # dcsm_checkpoint_seconds _sum/_count by phase

    async def sample(self) -> None:
        try:
            text = await self.client.metrics()
        except Exception:  # a slow or busy service: the next sample will do
            return
        lag = metric_samples(text, "dcsm_consumer_lag")
        if lag:
            self.max_lag = max(lag + ([self.max_lag] if self.max_lag is not None else []))
        rss = metric_samples(text, "process_resident_memory_bytes")
        if rss:
            self.rss = rss[0]
        self.deltas.append(sum(metric_samples(text, "dcsm_deltas_total")))
        for line in text.splitlines():
            if line.startswith("dcsm_checkpoint_seconds_sum") or line.startswith(
                "dcsm_checkpoint_seconds_count"
            ):
                key = line.split(" ", 1)[0].replace("dcsm_checkpoint_seconds_", "")
                self.checkpoints[key] = float(line.rsplit(" ", 1)[1])

    async def run(self) -> None:
        while True:
            await self.sample()
            await asyncio.sleep(self.every_s)


async def _step(
    args: argparse.Namespace, rate: float, batch: Any, base: int, client: AsyncClient,
    pool: ProducerPool, bootstrap: str, probe_encoding: Any,
) -> dict[str, Any]:  # fmt: skip
    from aiokafka import AIOKafkaConsumer

    n = len(batch)
    kafka_s, ws_s = FrameLatencies(PROBE), FrameLatencies(PROBE)
    consumer = AIOKafkaConsumer(
        args.matches_topic, bootstrap_servers=bootstrap, auto_offset_reset="latest",
        fetch_max_wait_ms=5, max_partition_fetch_bytes=64 * 1024 * 1024,
        fetch_max_bytes=256 * 1024 * 1024,
    )  # fmt: skip
    await consumer.start()
    await consumer.seek_to_end()
    # The first poll pins the position to the current end, before anything is produced.
    await consumer.getmany(timeout_ms=50)
    probe_key = PROBE.encode()
    sampler = _Sampler(client)

    async def read_kafka() -> None:
        while True:
            got = await consumer.getmany(timeout_ms=50)
            recv = time.time()
            for msgs in got.values():
                kafka_s.add_many([m.value for m in msgs if m.key == probe_key], recv)

    # The probe's count frames, read whole: no Python work per update.
    probe = client.subscribe(PROBE, counts=True, encoding=probe_encoding, dedupe=False,
                             reconnect=False)  # fmt: skip

    async def read_ws() -> None:
        async for item in probe.batches():
            ws_s.add_batch(item)

    procs = producers_for(rate, args.encoding, args.producers)
    async with probe:
        tasks = [asyncio.create_task(t) for t in (read_kafka(), read_ws(), sampler.run())]
        await probe.wait_open()
        offsets = arrival_offsets(n, rate, args.seed + int(rate))
        sent: StepSend = await pool.send_step(
            batch, offsets, args.encoding, use=procs, window_s=args.linger_ms / 1000
        )
        t0, t_sent = sent.t0, sent.t_done
        drain_s = args.drain_s if args.drain_s is not None else max(30.0, 3 * args.duration)
        deadline = t_sent + drain_s
        done_at, last = None, base - 1
        while True:
            last = (await client.status()).processed_seq
            now = time.time()
            if last >= base + n - 1:
                done_at = now
                break
            if now >= deadline:
                break
            await asyncio.sleep(0.01)
        end = done_at or time.time()
        await sampler.sample()
        # Frames already emitted are in flight; give the readers a moment.
        await asyncio.sleep(0.5)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    await consumer.stop()
    processed = int(min(max(last - base + 1, 0), n))
    kafka_l, ws_l = kafka_s.latencies(base, n), ws_s.latencies(base, n)
    res: dict[str, Any] = {
        "target_rate": rate,
        "updates": n,
        "first_seq": base,
        "producers": len(sent.reports),
        "send_rate": sent.send_rate(),
        "send_lag_max_ms": sent.max_late_s * 1000,
        "processed": processed,
        "throughput": processed / max(end - t0, 1e-9),
        "drained_after_send_s": (done_at - t_sent) if done_at else None,
        "e2e_kafka_ms": percentiles(kafka_l.e2e, 1000),
        "e2e_websocket_ms": percentiles(ws_l.e2e, 1000),
        "service_ms": percentiles(kafka_l.service, 1000),
        "websocket_dropped": ws_s.gaps,
        "rss_bytes": sampler.rss,
        "max_consumer_lag": sampler.max_lag,
        # Match deltas (or counted matches) the service emitted during the step, per second.
        "deltas_per_s": (sampler.deltas[-1] - sampler.deltas[0]) / max(end - t0, 1e-9)
        if len(sampler.deltas) > 1
        else None,
        # Checkpoint phases since the service started: seconds summed, and how many.
        "checkpoints": dict(sampler.checkpoints),
    }
    p99 = res["e2e_kafka_ms"]["p99"]
    res["sustained"] = bool(
        done_at
        and res["send_rate"] >= 0.95 * rate
        and done_at - t_sent <= max(0.5, args.slo_ms / 1000)
        and p99 is not None
        and p99 <= args.slo_ms
    )
    return res


async def _settle(client: AsyncClient, seq: int, timeout_s: float) -> bool:
    """Wait until ``seq`` is processed (a step's backlog, before the next step starts)."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if (await client.status()).processed_seq >= seq:
            return True
        await asyncio.sleep(0.05)
    return False


def _line(res: dict[str, Any]) -> str:
    k = res["e2e_kafka_ms"]
    fmt = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
    return (
        f"rate {res['target_rate']:>10,.0f}/s  sent {res['send_rate']:>10,.0f}/s "
        f"({res['producers']}p)  processed {res['throughput']:>10,.0f}/s  "
        f"e2e p50/p95/p99 {fmt(k['p50'])}/{fmt(k['p95'])}/{fmt(k['p99'])} ms  "
        f"{'sustained' if res['sustained'] else 'NOT sustained'}"
    )


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    rates = args.rates
    need = int(sum(r * args.duration for r in rates))
    stream = _load_stream(args, need)
    async with AsyncClient(args.service, timeout_s=60) as client:
        status = await client.status()
        bootstrap = args.kafka or status.kafka_bootstrap
        if not bootstrap:
            raise SystemExit("loadgen: the service has no Kafka ingest; pass --kafka or --embedded")
        backend = status.backend or args.backend
        encodings = {p.name: await _register(client, p, m, e) for p, m, e in _queries(args)}
        procs = max(producers_for(r, args.encoding, args.producers) for r in rates)
        pool = ProducerPool(bootstrap, args.updates_topic, procs)
        await asyncio.to_thread(pool.start)
        results: list[dict[str, Any]] = []
        base = (await client.status()).next_seq
        pos = 0
        try:
            for rate in rates:
                n = int(rate * args.duration)
                if pos + n > len(stream):
                    print(f"loadgen: stream exhausted before rate {rate:g}", file=sys.stderr)
                    break
                batch = stream.slice(pos, pos + n)
                res = await _step(
                    args, rate, batch, base, client, pool, bootstrap, encodings[PROBE]
                )
                results.append(res)
                print(_line(res), flush=True)
                pos += n
                base += n
                # The next step starts from an idle service: wait out this one's backlog.
                if not await _settle(client, base - 1, max(60.0, 6 * args.duration)):
                    print("loadgen: warning: the backlog did not drain before the next rate",
                          file=sys.stderr, flush=True)  # fmt: skip
                await asyncio.sleep(1.0)
        finally:
            task = asyncio.current_task()
            stopping = task is not None and task.cancelling() > 0  # Ctrl-C: no waiting
            await asyncio.to_thread(pool.stop, 1.0 if stopping else 10.0)
    sustained = [r["target_rate"] for r in results if r["sustained"]]
    return {
        "config": {
            "stream": args.stream or f"synthetic power-law, {args.vertices} vertices",
            "graph": args.graph,
            "queries": list(encodings),
            "mode": args.mode,
            "encoding": args.encoding,
            "output_encoding": args.output_encoding,
            "frame_encodings": encodings,
            "producers": args.producers,
            "linger_ms": args.linger_ms,
            "duration_s": args.duration,
            "slo_p99_ms": args.slo_ms,
            "service": args.service,
            "bootstrap": bootstrap,
            "backend": backend,
            "device": device_name(backend),
            "loadgen_cpus": os.cpu_count(),
        },  # fmt: skip
        "results": results,
        "max_sustained_rate": max(sustained) if sustained else None,
    }


def run_loadgen(args: argparse.Namespace) -> int:
    from dcsm.service.logs import configure_logging
    from dcsm.service.stopping import StopOnSignal

    configure_logging("warning")
    stopper = StopOnSignal(_interrupt).install()
    try:
        return _loadgen(args, stopper)
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C or SIGTERM, all stopped
        return stopper.exit_code
    finally:
        stopper.uninstall()


def _interrupt(sig: int) -> None:
    """The first SIGINT/SIGTERM: cancel the running event loop's main task, or (outside one)
    raise KeyboardInterrupt here; either way the ``finally`` blocks stop the children."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise KeyboardInterrupt from None
    for task in asyncio.all_tasks(loop):
        if task.get_coro().__qualname__ == "_run":  # type: ignore[union-attr]
            loop.call_soon_threadsafe(task.cancel)
            return
    raise KeyboardInterrupt


def _loadgen(args: argparse.Namespace, stopper: Any) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    broker = svc = None
    try:
        if args.embedded:
            from dcsm.service.broker import TansuBroker

            from .embedded import ServiceProcess

            broker = TansuBroker()
            stopper.kills.append(broker.kill)
            broker.start()
            extra = ["--graph", args.graph] if args.graph else []
            svc = ServiceProcess(
                *extra, "--log-level", "warning", "--kafka-acks", "1", *args.serve_arg,
                kafka=broker.bootstrap, backend=args.backend, own_session=True,
            )  # fmt: skip
            stopper.kills.append(svc.kill)
            print(
                f"loadgen: embedded broker {broker.bootstrap}; starting dcsm serve ...", flush=True
            )
            svc.start(timeout_s=600)
            args.service = svc.base_url
        try:
            report = asyncio.run(_run(args))
        except httpx.TransportError as exc:  # a wrong --service URL, or nothing there
            raise DcsmError(f"cannot reach the service at {args.service!r}: {exc}") from None
    finally:
        if svc is not None:
            svc.terminate(30.0)
        if broker is not None:
            broker.stop()
    (out / "results.json").write_text(json.dumps(report, indent=2))
    if report["results"]:
        from .plot import plot

        cfg = report["config"]
        title = (f"dcsm loadgen: {cfg['stream']}, {cfg['encoding']} input, {cfg['mode']} mode, "
                 f"{cfg['backend']} engine on {cfg['device']}")  # fmt: skip
        try:
            plot(report["results"], out / "latency.png", title)
        except ImportError:  # results.json is written; the picture needs the plot extra
            print("loadgen: no latency.png: install the plot extra (pip install 'dcsm[plot]')")
    print(json.dumps({"max_sustained_rate": report["max_sustained_rate"], "out": str(out)}))
    return 0
