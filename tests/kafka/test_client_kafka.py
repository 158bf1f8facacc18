"""``dcsm.client.UpdateProducer`` through a real tansu broker into a real ``dcsm serve``:
JSON and binary records (and pre-encoded ones) are applied as the CPU engine applies the same
updates, each with the ``ts`` it was given as its ``arrival_ts``; a record the broker never
acknowledges is an error of ``flush()``, not a silent loss."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from helpers import TRI, oracle_deltas

from dcsm.client import AsyncClient, DeliveryError, Delta, End, UpdateProducer, encode_record
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.broker import TansuBroker

pytestmark = pytest.mark.kafka


async def test_update_producer_json_and_binary_are_applied(make_service, topics, broker) -> None:
    batch = powerlaw_stream(100, 1800, num_labels=2, seed=13)
    expected = oracle_deltas(batch, [(TRI, 0)])
    assert len(expected) > 100
    ts = 1.6e9 + np.arange(len(batch)) / 1000.0
    svc = make_service()
    async with AsyncClient(svc.base_url) as c:
        await c.register_query(TRI)
        deltas: list[Delta] = []

        async def read() -> None:
            async for x in c.subscribe("tri"):
                if isinstance(x, Delta):
                    deltas.append(x)
                elif isinstance(x, End):
                    return

        task = asyncio.create_task(read())
        async with UpdateProducer(broker.bootstrap, topics.updates, encoding="json",
                                  max_record_updates=250) as json_p:  # fmt: skip
            assert await json_p.send(batch.slice(0, 600), ts=ts[:600], wait=True) == 3
        async with UpdateProducer(broker.bootstrap, topics.updates, acks=1) as bin_p:
            await bin_p.send(batch.slice(600, 1200), ts=ts[600:1200], wait=True)
            # Pre-encoded records, as the load generator sends them.
            for a in range(1200, 1800, 300):
                value = encode_record(batch.slice(a, a + 300), "json", ts[a : a + 300])
                await bin_p.send_value(value)
            await bin_p.flush()
        for _ in range(600):
            if (await c.status()).processed_seq >= len(batch) - 1:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        await c.delete_query("tri")
        await asyncio.wait_for(task, 30)
    assert sorted((d.query, d.sign, d.seq, d.match) for d in deltas) == expected
    for d in deltas:
        assert d.arrival_ts == pytest.approx(ts[d.seq], abs=2e-6)


async def test_a_record_the_broker_never_acknowledges_fails_the_flush(topics) -> None:
    try:
        broker = TansuBroker().start()  # its own: this test stalls it
    except Exception as exc:  # no tansu binary on this platform
        pytest.skip(f"tansu broker unavailable: {exc}")
    one = [{"op": "insert", "u": 1, "v": 2}]
    try:
        async with UpdateProducer(broker.bootstrap, topics.updates, request_timeout_ms=1500) as p:
            await p.send(one)
            await p.flush()  # delivered: nothing raised
            broker.pause()  # SIGSTOP: the broker answers nothing
            try:
                await p.send(one)
                await p.send(one)
                with pytest.raises(DeliveryError) as err:
                    await p.flush()
                assert err.value.failed == 2
            finally:
                broker.resume()
            await p.send(one, wait=True)  # the producer goes on once the broker does
            await p.flush()
    finally:
        broker.stop()
