"""Fixtures shared by the whole suite: the reference data and hypothesis profiles.

The reference data (expected counts from published CSM systems, real graphs) lives beside
the checkout in ``../shared/data``, or wherever ``$DCSM_SHARED_DATA`` points; it is never
copied into the repository. Tests that need it take the ``shared_data`` fixture and skip
where it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from refdata import SKIP_REASON, shared_data_dir

# Every `dcsm serve` a test starts inherits this: a service killed with SIGKILL holds its
# input lease until its session expires, and a restart waits for that (10 s by default).
os.environ.setdefault("DCSM_INPUT_LEASE_SESSION_MS", "3000")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = shared_data_dir()
    if root is None:
        pytest.skip(SKIP_REASON)
    return root


# Hypothesis: no deadline (the first example of a session may JIT-compile the numba kernels
# when the on-disk cache is cold), a fixed example sequence on CI so a red run reproduces.
settings.register_profile(
    "dev", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile(
    os.environ.get("DCSM_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)
