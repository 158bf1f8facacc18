"""Fixtures for the HTTP/websocket tests: a real ``dcsm serve`` subprocess on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers import warm_engine_cache

from dcsm.loadgen.embedded import ServiceProcess


@pytest.fixture(scope="session", autouse=True)
def _jit_cache() -> None:
    warm_engine_cache()


@pytest.fixture
def service(tmp_path) -> Iterator[ServiceProcess]:
    """A fresh HTTP-only service (empty graph, seqs from 0)."""
    svc = ServiceProcess(workdir=tmp_path, env={"DCSM_MAX_RECORD_UPDATES": "5000"})
    with svc:
        yield svc
