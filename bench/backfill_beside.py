"""What a big backfill costs the other queries: the service (in this process, no Kafka)
streams updates for a triangle query at a fixed rate; a heavy pattern is registered with
``?backfill=true`` mid-stream, over the graph loaded first (the stream's updates touch
vertices of their own, so the backfill sees none of them). The triangle
query's response time (submit -> outcome, HTTP path) is reported before, during and after
the backfill, beside the backfill's size and time. ``--inline`` runs the same with the
backfill on the engine thread (the service before service/backfill.py; with ``--backend
gpu``, the device's static matcher): the stream then waits for it. The service's own
histogram of arrival to the start of processing by the engine (``dcsm_response_seconds``)
splits the triangle query's time while the backfill runs (``engine_s``: the buckets holding
p50 and p99): the part spent before the engine began on an update. ``during_from_1s``
leaves out the first second of the backfill (the engine stops once to take the snapshot);
``samples`` holds every (sent at, response) pair.

Once registered, the heavy pattern also matches every update of the stream live, and that
work grows with the stream's own graph: response time after the registration is not the
backfill's alone. ``--no-backfill`` is the control: the same registration without a
backfill (mode ``control``). Compare the phase ``registered`` (from the registration to the
stream's end) of a run with a backfill against the control's.

    python bench/backfill_beside.py --edges 5000 --updates 8000 --rate 500 \
        --backfill-at 2 [--inline | --no-backfill] --out bench/results/backfill
    python bench/backfill_beside.py --backend gpu --graph g43.npz --pattern path6 --inline
    dcsm gen-graph --model chung-lu --edges 43000000 --labels 8 --out g43l.npz
    python bench/backfill_beside.py --backend gpu --graph g43l.npz --pattern lcycle6 --inline

``--graph`` starts the service on a graph file (``dcsm gen-graph`` writes one of tens of
millions of edges in seconds) instead of sending a generated graph of ``--edges`` through
the service.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import platform
import time
from pathlib import Path

import numpy as np

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Pattern, UpdateBatch
from dcsm.schemas import QuerySpec
from dcsm.service.app import Service
from dcsm.service.settings import Settings
from dcsm.stats import percentiles

TRI = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
# Heavy patterns: a 5-vertex path has billions of embeddings on a power-law graph of a few
# million edges; the 6-vertex ones are issue 18's backfill at LiveJournal size.
HEAVY = {
    "path5": Pattern.build("path5", [None] * 5, [(i, i + 1, None) for i in range(4)]),
    "path6": Pattern.build("path6", [None] * 6, [(i, i + 1, None) for i in range(5)]),
    "cycle6": Pattern.build("cycle6", [None] * 6, [(i, (i + 1) % 6, None) for i in range(6)]),
    # The same with vertex labels 0..5 (a graph from `dcsm gen-graph --labels 8`): what a
    # fraud pattern over typed accounts looks like; walking a plain 6-path or 6-cycle on a
    # power-law graph of tens of millions of edges is out of reach (path-scale-1127).
    "lpath6": Pattern.build("lpath6", list(range(6)), [(i, i + 1, None) for i in range(5)]),
    "lcycle6": Pattern.build(
        "lcycle6", list(range(6)), [(i, (i + 1) % 6, None) for i in range(6)]
    ),  # fmt: skip
}


def _buckets(svc: Service) -> dict[str, np.ndarray]:
    """The triangle query's cumulative bucket counts of the service's response-time
    histogram, now: (upper edge s, count) rows."""
    rows = [
        (float(sample.labels["le"]), sample.value)
        for fam in svc.metrics.response_seconds.collect()
        for sample in fam.samples
        if sample.name.endswith("_bucket") and sample.labels.get("query") == TRI.name
    ]
    return {"response": np.array(sorted(rows))}


def _quantile_buckets(before: dict, after: dict) -> dict:
    """Between two _buckets snapshots: per histogram, the upper edges (s) of the buckets
    holding p50 and p99, and how many observations."""
    out = {}
    for name, rows in after.items():
        prev = before.get(name)
        cum = rows[:, 1] - (prev[:, 1] if prev is not None else 0)
        n = int(cum[-1])
        edge = {q: None if n == 0 else float(rows[np.searchsorted(cum, q * n), 0])
                for q in (0.5, 0.99)}  # fmt: skip
        out[name] = {"p50_le": edge[0.5], "p99_le": edge[0.99], "n": n}
    return out


async def measure(args: argparse.Namespace) -> dict:
    # The stream lives on vertices of its own, sparse: the heavy pattern, once registered,
    # also matches each of its updates live, and that must stay cheap for the figure to be
    # the backfill's cost, not the heavy pattern's live matching.
    far = powerlaw_stream(args.updates, args.updates, num_labels=1, seed=2)
    stream = dataclasses.replace(far, u=far.u + 10**9, v=far.v + 10**9)
    where = "inline" if args.inline else "beside"
    mode = "control" if args.no_backfill else where
    svc = Service(Settings(backend=args.backend, state_dir=None, backfill_threads=args.threads,
                           backfill_mode=where, graph=args.graph))  # fmt: skip
    await svc.start()
    if args.graph is None:
        graph = powerlaw_stream(args.edges // 8, args.edges, num_labels=1, seed=1,
                                delete_fraction=0.0)  # fmt: skip
        await svc.submit_updates(graph, wait=True)
    await svc.register_query(QuerySpec.from_pattern(TRI), "embeddings", "json", False)
    step = 0.01
    per = max(1, int(args.rate * step))
    samples: list[tuple[float, float]] = []  # (sent at, seconds to the outcome)
    t0 = time.monotonic()
    backfill: dict = {}
    hist: dict[str, dict] = {}

    async def register_heavy() -> None:
        await asyncio.sleep(args.backfill_at)
        b0 = time.monotonic()
        backfill["start"] = b0 - t0
        hist["start"] = _buckets(svc)
        spec = QuerySpec.from_pattern(HEAVY[args.pattern])
        _, n = await svc.register_query(spec, "count", "json", not args.no_backfill)
        backfill.update(end=time.monotonic() - t0, seconds=time.monotonic() - b0, matches=n)
        hist["end"] = _buckets(svc)

    heavy = asyncio.create_task(register_heavy())

    async def send(part: UpdateBatch) -> None:
        sent = time.monotonic()
        await svc.submit_updates(part, wait=True)
        samples.append((sent - t0, time.monotonic() - sent))

    pending = []
    for i in range(0, len(stream), per):
        due = t0 + (i // per) * step
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        pending.append(asyncio.create_task(send(stream.slice(i, min(i + per, len(stream))))))
    await asyncio.gather(*pending)
    await heavy
    await svc.stop()
    at = np.array([s for s, _ in samples])
    lat = np.array([w for _, w in samples])
    during = (at >= backfill["start"]) & (at < backfill["end"])
    settled = during & (at >= backfill["start"] + 1.0)
    registered = at >= backfill["start"]
    phases = {
        "before": percentiles(lat[at < backfill["start"]]),
        "during": percentiles(lat[during]),
        # The same less the first second: without the snapshot's one-time stop of the
        # engine at registration.
        "during_from_1s": percentiles(lat[settled]),
        "after": percentiles(lat[at >= backfill["end"]]),
        # From the registration to the stream's end, backfill or not: the phase to compare
        # with a --no-backfill run, which has the heavy query's live matching too.
        "registered": percentiles(lat[registered]),
    }
    return {
        "command": "python bench/backfill_beside.py " + " ".join(args.argv),
        "host": platform.node(), "cpus": __import__("os").cpu_count(),
        "backend": args.backend, "mode": mode, "pattern": args.pattern,
        "graph": args.graph or f"powerlaw, {args.edges} edges",
        "rate": args.rate, "updates": len(stream), "backfill": backfill,
        "response_s": phases,
        "engine_s": {"before": _quantile_buckets({}, hist["start"]),
                     "during": _quantile_buckets(hist["start"], hist["end"])},
        # every sample: (sent at s, seconds to the outcome), for plots
        "samples": np.round(np.stack([at, lat], axis=1), 6).tolist(),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--graph", default=None, help="graph file to start from (else --edges)")
    ap.add_argument("--edges", type=int, default=200_000)
    ap.add_argument("--pattern", choices=sorted(HEAVY), default="path5")
    ap.add_argument("--updates", type=int, default=30_000)
    ap.add_argument("--rate", type=float, default=2_000)
    ap.add_argument("--backfill-at", type=float, default=3.0, help="seconds into the stream")
    ap.add_argument("--threads", type=int, default=1, help="backfill threads")
    ap.add_argument("--inline", action="store_true",
                    help="--backfill-mode inline: the backfill on the engine thread")  # fmt: skip
    ap.add_argument("--no-backfill", action="store_true",
                    help="the control: register the heavy query without a backfill")  # fmt: skip
    ap.add_argument("--out", type=Path, default=None, help="folder for backfill-MODE.json")
    args = ap.parse_args()
    args.argv = __import__("sys").argv[1:]
    result = asyncio.run(measure(args))
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        name = f"backfill-{result['mode']}"
        if args.backend != "cpu" or args.pattern != "path5":
            name += f"-{args.backend}-{args.pattern}"
        (args.out / f"{name}.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
