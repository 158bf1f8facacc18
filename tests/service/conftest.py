"""Fixtures for the HTTP/websocket tests: a real ``dcsm serve`` subprocess on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dcsm.service.testing import ServiceProcess


@pytest.fixture(scope="session", autouse=True)
def _jit_cache() -> None:
    """Compile the CPU engine once per worker (numba caches to disk) before services start,
    so no service spends its readiness timeout compiling."""
    from dcsm.service.engine_worker import _warm_up

    _warm_up("cpu")


@pytest.fixture
def service(tmp_path) -> Iterator[ServiceProcess]:
    """A fresh HTTP-only service (empty graph, seqs from 0)."""
    svc = ServiceProcess(workdir=tmp_path, env={"DCSM_MAX_RECORD_UPDATES": "5000"})
    with svc:
        yield svc
