"""Where the reference data is (a module of its own so that test modules can import it;
``conftest`` is not importable by name once several conftest files exist)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP_REASON = (
    "../shared/data not found: reference data is only present in the project's CI and dev machines"
)


def shared_data_dir() -> Path | None:
    """``$DCSM_SHARED_DATA`` if set, else ``../shared/data`` relative to the repository root;
    None when that folder does not exist."""
    env = os.environ.get("DCSM_SHARED_DATA")
    root = Path(env) if env else REPO.parent / "shared" / "data"
    return root if root.is_dir() else None
