"""What a service does when its broker stops taking output: the scenario of
tests/kafka/test_output_loss.py without its assertions, with the broker paused for
``--pause-s`` (longer than the producer's request timeout, 30 s by default), then resumed.
Prints whether the service is still running, how many of the backfill's deltas reached the
matches topic, and its log lines about the output and checkpoints.

    python bench/debug/output_stall.py [--pause-s 40]

Before the fix (7cac694) the service kept running, 16,884 of 35,454 deltas arrived, and a
checkpoint was written past the rest (lost for good); since, it stops with exit code 1 and
no checkpoint, and the test restarts it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "kafka")]

from broker_fixtures import Topics  # noqa: E402
from helpers import TRI, consume_topic, http_client, oracle_counts  # noqa: E402
from test_output_loss import FLAGS, UNCAPPED, backfill_ids, graph, load, register_tri  # noqa: E402

from dcsm.loadgen.embedded import ServiceProcess  # noqa: E402
from dcsm.service.broker import TansuBroker  # noqa: E402


async def main(pause_s: float) -> None:
    broker, topics = TansuBroker().start(), Topics()
    stream = graph()
    want = sum(oracle_counts(stream, TRI).values())
    svc = ServiceProcess(*topics.flags(), *FLAGS, kafka=broker.bootstrap, env=UNCAPPED).start()
    try:
        async with http_client(svc.base_url) as c:
            await load(broker.bootstrap, topics, c, stream)
            broker.pause()
            post = register_tri(c)
            await asyncio.sleep(pause_s)
            broker.resume()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(post, 60)
        got = await consume_topic(
            broker.bootstrap, topics.matches, 0, timeout_s=30, idle_s=3,
            enough=lambda recs: len(backfill_ids(recs)) >= want,
        )  # fmt: skip
        assert svc.proc is not None
        print(f"service running: {svc.proc.poll() is None} (exit code {svc.proc.poll()})")
        print(f"backfill deltas delivered: {len(backfill_ids(got))} of {want}")
        for line in svc.log(1 << 20).splitlines():
            if "kafka output" in line or "delivery" in line or "checkpoint" in line:
                print(line)
    finally:
        svc.kill()
        broker.stop()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pause-s", type=float, default=40.0)
    asyncio.run(main(ap.parse_args().pause_s))
