"""Scale-out through Kafka: one replica against N replicas (one GPU each), same host.

    python bench/scale_bench.py --workload DIR --replicas 1,2 --out bench/results/scale
    python bench/scale_bench.py --workload DIR --replicas 1,2 --gpus 1        # share one GPU
    python bench/scale_bench.py --workload DIR --replicas 2 --backends gpu,cpu --shard updates

For each N and shard mode: a fresh loopback tansu broker and topics, N `dcsm serve --replicas
N --replica-index I --shard MODE` processes (replica I on GPU I mod --gpus through
CUDA_VISIBLE_DEVICES, with backend I of --backends, cycled; each bulk-loading
``DIR/initial.graph``), every query of ``DIR/queries/`` registered in count mode
through replica 0 (the control record puts it at one seq on every replica), then the whole
``DIR/stream.updates`` produced at once (binary records) and timed from the first record sent
until every replica has emitted the frames of the last update. Every query's counted matches
(+ and -, summed over the replicas: each query is matched by one) are checked against
``DIR/peer_timings.tsv`` where it has them. Writes ``scale.json`` (device, per N: seconds,
updates/s, per-replica engine memory, per-query counts and owners) and prints a table with
the ratio to one replica.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from dcsm.client import AsyncClient, UpdateProducer
from dcsm.engine import device_name
from dcsm.graphio import read_csm_query, read_csm_stream
from dcsm.loadgen.embedded import ServiceProcess
from dcsm.service.broker import TansuBroker


def expected_counts(workload: Path) -> dict[str, int]:
    path = workload / "peer_timings.tsv"
    if not path.exists():
        return {}
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:] if line.strip()]
    return {r[0]: int(r[1]) for r in rows}


def replica_backend(args: argparse.Namespace, i: int) -> str:
    backends = args.backends.split(",")
    return backends[i % len(backends)]


async def run_n(n: int, shard: str, args: argparse.Namespace, workload: Path) -> dict[str, Any]:
    stream = read_csm_stream(workload / "stream.updates")
    queries = {p.stem: read_csm_query(p) for p in sorted((workload / "queries").iterdir())}
    tmp = Path(tempfile.mkdtemp(prefix=f"scale-{n}-"))
    broker = TansuBroker().start()
    topic = f"scale{n}"
    flags = ["--updates-topic", f"{topic}.updates", "--matches-topic", f"{topic}.matches",
             "--dead-letter-topic", f"{topic}.dead", "--consumer-group", topic,
             "--kafka-acks", "1", "--graph", str(workload / "initial.graph"),
             "--replicas", str(n), "--shard", shard]  # fmt: skip
    reps: list[ServiceProcess] = []
    try:
        for i in range(n):
            (tmp / f"r{i}").mkdir()
            backend = replica_backend(args, i)
            env = {"CUDA_VISIBLE_DEVICES": str(i % args.gpus)} if backend == "gpu" else {}
            reps.append(ServiceProcess(*flags, "--replica-index", str(i), kafka=broker.bootstrap,
                                       backend=backend, env=env,
                                       workdir=tmp / f"r{i}"))  # fmt: skip
        await asyncio.gather(*(asyncio.to_thread(r.start, timeout_s=600) for r in reps))
        clients = [AsyncClient(r.base_url, timeout_s=600) for r in reps]
        pins = dict(kv.split("=") for kv in args.pin.split(",") if kv) if n > 1 else {}
        for name, pattern in queries.items():  # named by their files
            pin = int(pins[name]) % n if name in pins and shard == "queries" else None
            await clients[0].register_query(pattern, mode="count", replica=pin)
        last = int(stream.seq[-1])
        async with UpdateProducer(broker.bootstrap, f"{topic}.updates",
                                  max_record_updates=10_000, acks=1) as prod:  # fmt: skip
            t0 = time.time()
            await prod.send(stream, wait=True)
        done = [False] * n
        while not all(done):
            for i, c in enumerate(clients):
                if not done[i]:
                    done[i] = (await c.status()).processed_seq >= last
            if time.time() - t0 > args.timeout:
                raise TimeoutError(f"{n} replica(s) did not finish within {args.timeout}s")
            await asyncio.sleep(0.02)
        seconds = time.time() - t0
        counts: dict[str, int] = {}
        owners: dict[str, list[int]] = {}
        placement = {q.name: q.replica for q in (await clients[0].list_queries()).items}
        memory = []
        for i, c in enumerate(clients):
            st = await c.status()
            memory.append((st.raw.get("engine") or {}).get("memory_bytes"))
            for q in (await c.list_queries()).items:
                full = await c.get_query(q.name)
                d = (full.stats or {}).get("deltas", {})
                got = int(d.get("+", 0)) + int(d.get("-", 0))
                counts[q.name] = counts.get(q.name, 0) + got
                if got:
                    owners.setdefault(q.name, []).append(i)
        for c in clients:
            await c.close()
        return {"replicas": n, "shard": shard, "updates": len(stream),
                "backends": [replica_backend(args, i) for i in range(n)],
                "gpu_of_replica": [i % args.gpus if replica_backend(args, i) == "gpu" else None
                                   for i in range(n)], "seconds": seconds,
                "updates_per_s": len(stream) / seconds, "counts": counts, "owners": owners,
                "placement": placement,
                "engine_memory_bytes": memory}  # fmt: skip
    finally:
        for r in reps:
            r.terminate()
        broker.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--workload", required=True,
                   help="DIR with initial.graph, stream.updates, queries/")  # fmt: skip
    p.add_argument("--replicas", default="1,2", help="comma-separated replica counts")
    p.add_argument(
        "--backends",
        "--backend",
        default="gpu",
        help="backend of replica I: item I of this list, cycled (gpu, cpu)",
    )
    p.add_argument(
        "--gpus",
        type=int,
        default=0,
        help="GPUs to spread replicas over (replica I on GPU I mod GPUS; 0: one each)",
    )
    p.add_argument("--shard", default="queries", help="comma-separated shard modes for N > 1")
    p.add_argument(
        "--pin",
        default="",
        help="QUERY=I,...: register these queries pinned to replica I mod N "
        "(shard mode queries); the others go to the least-loaded replica",
    )
    p.add_argument("--timeout", type=float, default=400.0)
    p.add_argument("--out", default="bench/results/scale")
    args = p.parse_args()
    workload = Path(args.workload)
    expected = expected_counts(workload)
    counts = [int(n) for n in args.replicas.split(",")]
    args.gpus = args.gpus or max(counts)
    runs = [
        asyncio.run(run_n(n, shard, args, workload))
        for n in counts
        for shard in (args.shard.split(",") if n > 1 else ["queries"])
    ]
    base = runs[0]["seconds"]
    for r in runs:
        r["speedup_vs_first"] = base / r["seconds"]
        wrong = {q: (c, expected[q]) for q, c in r["counts"].items()
                 if q in expected and expected[q] != c}  # fmt: skip
        r["counts_match_published"] = not wrong and bool(expected)
        r["count_mismatches"] = wrong
        r["counts_equal_to_first"] = r["counts"] == runs[0]["counts"]
    uses_gpu = "gpu" in args.backends.split(",")
    gpus = len({g for r in runs for g in r["gpu_of_replica"] if g is not None})
    report = {"device": device_name("gpu" if uses_gpu else "cpu"), "gpus": gpus,
              "backends": args.backends,
              "workload": str(workload), "command": "python bench/scale_bench.py " +
              " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
              "host_cpus": os.cpu_count(), "runs": runs}  # fmt: skip
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.json").write_text(json.dumps(report, indent=1))
    print(f"{report['device']} ({gpus} GPUs), {workload}" if gpus else f"cpu, {workload}")
    print(
        "| replicas | shard | backends | GPU of replica | seconds | updates/s | x first | "
        "counts = published | counts = first |"
    )
    print("| ---: | --- | --- | --- | ---: | ---: | ---: | --- | --- |")
    for r in runs:
        gpu_of = ",".join("-" if g is None else str(g) for g in r["gpu_of_replica"])
        print(f"| {r['replicas']} | {r['shard']} | {','.join(r['backends'])} | {gpu_of} | "
              f"{r['seconds']:.2f} | {r['updates_per_s']:,.0f} | "
              f"{r['speedup_vs_first']:.2f} | {r['counts_match_published']} | "
              f"{r['counts_equal_to_first']} |")  # fmt: skip


if __name__ == "__main__":
    main()
