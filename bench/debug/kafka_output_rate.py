"""The Kafka output's rate (service/outputs.py) against a loopback tansu broker: ``--queries``
queries each hand over ``--frames`` json frames a round, as the fan-out does for an applied
batch, for ``--rounds`` rounds; the time until every frame is acknowledged, and the record
batches it took.

    python3 -P bench/debug/kafka_output_rate.py [--queries 100] [--rounds 200] [--frames 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from dcsm.service.broker import TansuBroker
from dcsm.service.outputs import KafkaOutput


async def measure(queries: int, rounds: int, frames: int) -> None:
    broker = TansuBroker().start()
    try:
        out = KafkaOutput(broker.bootstrap, "matches", "dead-letter", acks="1")
        await out.start()
        batches = 0
        send_batch = out._producer.send_batch

        async def counted(batch, topic, *, partition):  # type: ignore[no-untyped-def]
            nonlocal batches
            batches += 1
            return await send_batch(batch, topic, partition=partition)

        await out.send_frames("warm-up", ["{}"], None)
        await out.flush()
        out._producer.send_batch = counted
        t0 = time.perf_counter()
        for r in range(rounds):
            for q in range(queries):
                ids = [f"{q}-{r}-{j}" for j in range(frames)]
                body = [json.dumps({"query": q, "round": r, "id": i}) for i in ids]
                await out.send_frames(f"q{q}", body, ids)
            await asyncio.sleep(0)  # the fan-out yields between applied batches
        await out.flush()
        seconds = time.perf_counter() - t0
        n = queries * rounds * frames
        print(f"{queries} queries x {rounds} rounds x {frames} frames: {n:,} frames in "
              f"{seconds:.3f} s = {n / seconds:,.0f} frames/s, {batches} record batches, "
              f"{out.failures} failed")  # fmt: skip
        await out.stop()
    finally:
        broker.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--frames", type=int, default=5)
    a = ap.parse_args()
    asyncio.run(measure(a.queries, a.rounds, a.frames))


if __name__ == "__main__":
    main()
