"""The install test's marker (registered here, beside the one test that uses it)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "install: builds the wheel and installs it into a fresh venv (CI only)"
    )
