"""``dcsm loadgen``: open-loop load against a running service, through Kafka.

For each target rate it replays the next slice of a stream file (CSM format, read with
:func:`dcsm.graphio.read_csm_stream`; default: a synthetic power-law stream) into the
updates topic with exponential inter-arrival times, and measures, per update:

* **end-to-end latency**: from the update's *scheduled* send time (so a producer that falls
  behind does not hide queueing: no coordinated omission) to the moment its output frame is
  received, once from the ``dcsm.matches`` topic and once from a websocket;
* **service latency**: arrival at the service -> frame emitted (``emitted_ts - arrival_ts``);
* **throughput**: updates processed per second over the run (``/api/v1/status``).

Every update is observed, not just those that happen to create matches: loadgen registers a
probe query, a single edge in count mode, whose count frame follows every applied update.
The workload queries (``--queries`` CSM files; default a triangle, in ``--mode``) run beside
it. A rate counts as *sustained* when the producer kept it, the service had no backlog left
once the producer stopped (drained within the SLO), and the p99 end-to-end latency stayed
under ``--slo-ms``.

Output: ``results.json`` and ``latency.png`` (percentiles and throughput vs rate) in ``--out``.
``--embedded`` starts its own tansu broker and ``dcsm serve`` subprocess on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.stats import percentiles

from .producer import PRODUCER_OPTIONS, arrival_offsets, layout, send_paced

PROBE = "_loadgen_probe"


def add_loadgen_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--stream", metavar="FILE", help="CSM stream file (e/-e lines); default synthetic"
    )
    p.add_argument("--graph", metavar="FILE", help="with --embedded: initial graph for the service")
    p.add_argument("--queries", metavar="FILE", nargs="*", default=[], help="CSM query files")
    p.add_argument("--mode", choices=["embeddings", "count"], default="count",
                   help="how the workload queries report (default count)")  # fmt: skip
    p.add_argument("--rates", default="1000,2000,5000", help="comma-separated updates/s")
    p.add_argument("--duration", type=float, default=10.0, help="seconds per rate (default 10)")
    p.add_argument("--encoding", choices=["json", "binary"], default="binary")
    p.add_argument("--service", default="http://127.0.0.1:8000", help="service base URL")
    p.add_argument("--kafka", metavar="HOST:PORT", help="broker (default: the service's own)")
    p.add_argument("--updates-topic", default="dcsm.updates")
    p.add_argument("--matches-topic", default="dcsm.matches")
    p.add_argument("--embedded", action="store_true",
                   help="start a loopback tansu broker and a dcsm serve subprocess")  # fmt: skip
    p.add_argument("--slo-ms", type=float, default=1000.0, help="p99 bound for 'sustained'")
    p.add_argument("--out", default="loadgen-out", help="directory for results.json, latency.png")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--vertices", type=int, default=20_000, help="synthetic stream: vertices")


@dataclass
class Samples:
    """Latencies (seconds) of one output path during one rate step."""

    e2e: list[float] = field(default_factory=list)
    service: list[float] = field(default_factory=list)
    seqs: set[int] = field(default_factory=set)

    def take(self, frame: dict[str, Any], recv: float, base: int, sched: np.ndarray) -> None:
        if frame.get("query") != PROBE or frame.get("type") != "count":
            return
        k = frame["seq"] - base
        if 0 <= k < len(sched) and frame["seq"] not in self.seqs:
            self.seqs.add(frame["seq"])
            self.e2e.append(recv - sched[k])
            self.service.append(frame["emitted_ts"] - frame["arrival_ts"])


def _load_stream(args: argparse.Namespace, need: int) -> Any:
    from dcsm.graphio import read_csm_stream

    if args.stream:
        return read_csm_stream(args.stream)
    from .synth import powerlaw_stream

    return powerlaw_stream(args.vertices, need, num_labels=3, seed=args.seed, gamma=2.5)


def _queries(args: argparse.Namespace) -> list[tuple[Any, str]]:
    from dcsm.graphio import read_csm_query
    from dcsm.model import Pattern

    edge = Pattern.build(PROBE, [None, None], [(0, 1, None)])
    out = [(edge, "count")]
    if args.queries:
        out += [(read_csm_query(q), args.mode) for q in args.queries]
    else:
        tri = Pattern.build("triangle", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
        out.append((tri, args.mode))
    return out


async def _step(
    args: argparse.Namespace, rate: float, batch: Any, client: Any, producer: Any,
    bootstrap: str, ws_url: str,
) -> dict[str, Any]:  # fmt: skip
    from aiokafka import AIOKafkaConsumer
    from websockets.asyncio.client import connect

    n = len(batch)
    base = (await client.get("/api/v1/status")).json()["next_seq"]
    kafka_s, ws_s = Samples(), Samples()
    sched = np.zeros(n)
    consumer = AIOKafkaConsumer(
        args.matches_topic, bootstrap_servers=bootstrap, auto_offset_reset="latest",
        fetch_max_wait_ms=5, max_partition_fetch_bytes=16 * 1024 * 1024,
    )  # fmt: skip
    await consumer.start()
    await consumer.seek_to_end()
    # The first poll pins the position to the current end, before anything is produced.
    await consumer.getmany(timeout_ms=50)
    stop = asyncio.Event()

    async def read_kafka() -> None:
        while not stop.is_set():
            got = await consumer.getmany(timeout_ms=50)
            recv = time.time()
            for msgs in got.values():
                for m in msgs:
                    if m.key == PROBE.encode():
                        kafka_s.take(json.loads(m.value), recv, base, sched)

    async def read_ws(ws: Any) -> None:
        async for text in ws:
            ws_s.take(json.loads(text), time.time(), base, sched)

    async with connect(ws_url, proxy=None, compression=None, max_size=None) as ws:
        readers = [asyncio.create_task(read_kafka()), asyncio.create_task(read_ws(ws))]
        offsets = arrival_offsets(n, rate, args.seed + int(rate))
        lay = layout(batch, offsets, args.encoding)
        t0 = time.time() + 0.2
        records = lay.stamp(t0)  # each update's ts: its scheduled send time
        sched[:] = t0 + offsets
        sent = await send_paced(
            producer, args.updates_topic, records.values, t0 + records.send_at,
            sizes=records.sizes,
        )  # fmt: skip
        send_rate = n / max(sent.t_done - t0, 1e-9)
        t_sent = time.time()
        deadline = t_sent + max(30.0, 3 * args.duration)
        done_at = None
        while time.time() < deadline:
            st = (await client.get("/api/v1/status")).json()
            if st["processed_seq"] >= base + n - 1:
                done_at = time.time()
                break
            await asyncio.sleep(0.01)
        # Frames already emitted are in flight; give the readers a moment.
        await asyncio.sleep(0.5)
        stop.set()
        for r in readers:
            r.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    await consumer.stop()
    throughput = n / (done_at - t0) if done_at else 0.0
    res = {
        "target_rate": rate,
        "updates": n,
        "first_seq": base,
        "send_rate": send_rate,
        "throughput": throughput,
        "drained_after_send_s": (done_at - t_sent) if done_at else None,
        "e2e_kafka_ms": percentiles(kafka_s.e2e, 1000),
        "e2e_websocket_ms": percentiles(ws_s.e2e, 1000),
        "service_ms": percentiles(kafka_s.service, 1000),
    }
    # Sustained: the producer kept the rate, no backlog was left when it stopped (the
    # service drained within the SLO), and p99 stayed within the SLO.
    p99 = res["e2e_kafka_ms"]["p99"]
    slo_s = args.slo_ms / 1000
    res["sustained"] = bool(
        done_at
        and send_rate >= 0.95 * rate
        and done_at - t_sent <= max(0.5, slo_s)
        and p99 is not None
        and p99 <= args.slo_ms
    )
    return res


def _plot(results: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = [r["target_rate"] for r in results]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key, style in (("e2e_kafka_ms", "-"), ("e2e_websocket_ms", "--")):
        for pct, color in (("p50", "tab:blue"), ("p95", "tab:orange"), ("p99", "tab:red")):
            ys = [r[key][pct] if r[key][pct] is not None else np.nan for r in results]
            label = f"{pct} via {'Kafka' if 'kafka' in key else 'websocket'}"
            ax.plot(rates, ys, style, marker="o", color=color, label=label)
    ax.set_xlabel("target rate (updates/s)")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("latency vs rate")
    ax2.plot(rates, [r["throughput"] for r in results], marker="o", label="processed")
    ax2.plot(rates, rates, ":", color="gray", label="target")
    ax2.set_xlabel("target rate (updates/s)")
    ax2.set_ylabel("updates/s")
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=7)
    ax2.set_title("throughput")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx
    from aiokafka import AIOKafkaProducer

    from dcsm.schemas import QuerySpec

    rates = [float(x) for x in args.rates.split(",") if x.strip()]
    if not rates or min(rates) <= 0:
        raise SystemExit("loadgen: --rates needs positive numbers")
    need = int(sum(r * args.duration for r in rates))
    stream = _load_stream(args, need)
    async with httpx.AsyncClient(base_url=args.service, trust_env=False, timeout=60) as client:
        status = (await client.get("/api/v1/status")).json()
        bootstrap = args.kafka or (status["kafka"] or {}).get("bootstrap")
        if not bootstrap:
            raise SystemExit("loadgen: the service has no Kafka ingest; pass --kafka or --embedded")
        port = args.service.rsplit(":", 1)[-1].split("/")[0]
        for pattern, mode in _queries(args):
            body = QuerySpec.from_pattern(pattern).model_dump() | {"mode": mode}
            r = await client.post("/api/v1/queries", json=body)
            if r.status_code not in (201, 409):
                raise SystemExit(f"loadgen: registering {pattern.name} failed: {r.text}")
        ws_url = f"ws://127.0.0.1:{port}/api/v1/queries/{PROBE}/counts"
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, **PRODUCER_OPTIONS)
        await producer.start()
        results = []
        pos = 0
        try:
            for rate in rates:
                n = int(rate * args.duration)
                if pos + n > len(stream):
                    print(f"loadgen: stream exhausted before rate {rate:g}", file=sys.stderr)
                    break
                res = await _step(
                    args, rate, stream.slice(pos, pos + n), client, producer, bootstrap, ws_url
                )
                pos += n
                results.append(res)
                k = res["e2e_kafka_ms"]
                fmt = lambda x: "-" if x is None else f"{x:.1f}"  # noqa: E731
                print(
                    f"rate {rate:>8,.0f}/s  processed {res['throughput']:>9,.0f}/s  "
                    f"e2e p50/p95/p99 {fmt(k['p50'])}/{fmt(k['p95'])}/{fmt(k['p99'])} ms  "
                    f"{'sustained' if res['sustained'] else 'NOT sustained'}",
                    flush=True,
                )
                await asyncio.sleep(1.0)
        finally:
            await producer.stop()
    sustained = [r["target_rate"] for r in results if r["sustained"]]
    return {
        "config": {
            "stream": args.stream or f"synthetic power-law, {args.vertices} vertices",
            "graph": args.graph,
            "queries": [p.name for p, _ in _queries(args)],
            "mode": args.mode,
            "encoding": args.encoding,
            "duration_s": args.duration,
            "slo_p99_ms": args.slo_ms,
            "service": args.service,
            "bootstrap": bootstrap,
        },  # fmt: skip
        "results": results,
        "max_sustained_rate": max(sustained) if sustained else None,
    }


def run_loadgen(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    broker = svc = None
    try:
        if args.embedded:
            from dcsm.service.broker import TansuBroker

            from .embedded import ServiceProcess

            broker = TansuBroker().start()
            extra = ["--graph", args.graph] if args.graph else []
            svc = ServiceProcess(*extra, "--log-level", "warning", kafka=broker.bootstrap)
            print(
                f"loadgen: embedded broker {broker.bootstrap}; starting dcsm serve ...", flush=True
            )
            svc.start(timeout_s=600)
            args.service = svc.base_url
        report = asyncio.run(_run(args))
    finally:
        if svc is not None:
            svc.terminate()
        if broker is not None:
            broker.stop()
    (out / "results.json").write_text(json.dumps(report, indent=2))
    if report["results"]:
        title = f"dcsm loadgen: {report['config']['stream']} ({report['config']['mode']})"
        _plot(report["results"], out / "latency.png", title)
    print(json.dumps({"max_sustained_rate": report["max_sustained_rate"], "out": str(out)}))
    return 0
