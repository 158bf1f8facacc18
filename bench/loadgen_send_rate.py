"""How fast the load generator's producer processes can send (no service attached).

Starts a loopback tansu broker (or uses ``--kafka``), and for each (encoding, processes, rate)
sends a synthetic power-law stream through :class:`dcsm.loadgen.pool.ProducerPool` for
``--duration`` seconds, printing the achieved send rate and how far the senders ran behind
their schedule. ``dcsm loadgen --producers auto`` takes its per-process caps
(``PRODUCER_CAP`` in ``loadgen/loadgen.py``) from this.

    python bench/loadgen_send_rate.py --rates 100000,200000,400000 --processes 1,2 \\
        --encodings binary,json --duration 3 --json out.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid

from dcsm.loadgen.pool import ProducerPool
from dcsm.loadgen.producer import arrival_offsets
from dcsm.loadgen.synth import powerlaw_stream


async def _run(args: argparse.Namespace, bootstrap: str) -> list[dict[str, object]]:
    rates = [float(x) for x in args.rates.split(",")]
    procs = [int(x) for x in args.processes.split(",")]
    n_max = int(max(rates) * args.duration)
    t = time.time()
    stream = powerlaw_stream(args.vertices, n_max, seed=1, gamma=2.5)
    print(f"stream of {n_max:,} updates in {time.time() - t:.1f} s", flush=True)
    rows = []
    for encoding in args.encodings.split(","):
        for p in procs:
            pool = ProducerPool(bootstrap, f"bench-{uuid.uuid4().hex[:8]}", p)
            await asyncio.to_thread(pool.start)
            try:
                for rate in rates:
                    n = int(rate * args.duration)
                    offsets = arrival_offsets(n, rate, seed=2)
                    t = time.time()
                    sent = await pool.send_step(stream.slice(0, n), offsets, encoding)
                    row = {
                        "encoding": encoding, "processes": p, "target_rate": rate,
                        "send_rate": sent.send_rate(), "max_late_ms": sent.max_late_s * 1000,
                        "prepare_s": sent.t0 - t,
                    }  # fmt: skip
                    rows.append(row)
                    print(
                        f"{encoding:>6} x{p}  target {rate:>11,.0f}/s  "
                        f"sent {row['send_rate']:>11,.0f}/s "
                        f"({row['send_rate'] / rate:5.1%})  late max {row['max_late_ms']:7.1f} ms  "
                        f"prepare {row['prepare_s']:.1f} s",
                        flush=True,
                    )  # fmt: skip
            finally:
                await asyncio.to_thread(pool.stop)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rates", default="50000,100000,200000,400000")
    p.add_argument("--processes", default="1,2")
    p.add_argument("--encodings", default="binary,json")
    p.add_argument("--duration", type=float, default=3.0)
    p.add_argument("--vertices", type=int, default=100_000)
    p.add_argument("--kafka", help="broker HOST:PORT (default: a loopback tansu)")
    p.add_argument("--json", help="also write the rows here")
    args = p.parse_args()
    broker = None
    if args.kafka:
        bootstrap = args.kafka
    else:
        from dcsm.service.broker import TansuBroker

        broker = TansuBroker().start()
        bootstrap = broker.bootstrap
    try:
        rows = asyncio.run(_run(args, bootstrap))
    finally:
        if broker is not None:
            broker.stop()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cpus": os.cpu_count(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
