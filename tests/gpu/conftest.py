"""GPU tests: skipped where CuPy or a CUDA device is missing (CI has neither; run them on a
GPU machine with scripts/gpu-suite.sh)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dcsm.engine.factory import gpu_available

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip (visibly, with the reason) every GPU test where there is no GPU."""
    if gpu_available():
        return
    skip = pytest.mark.skip(
        reason="needs CuPy and a CUDA device (run scripts/gpu-suite.sh on a GPU machine)"
    )
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(skip)


def shared_data() -> Path | None:
    """../shared/data beside the checkout, or $DCSM_SHARED_DATA."""
    env = os.environ.get("DCSM_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[3] / "shared" / "data"
    return root if root.is_dir() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    root = shared_data()
    if root is None:
        pytest.skip("reference data not found (../shared/data or $DCSM_SHARED_DATA)")
    return root


@pytest.fixture(autouse=True)
def _stop_engines():
    """A failed test must not leave a persistent kernel running into the next one."""
    yield
    from dcsm.gpu.engine import GpuEngine

    for eng in list(GpuEngine._live):
        eng.close()
