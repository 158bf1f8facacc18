"""bench/compile_watch.py: a timed section's numba compiles are recorded (not its loads
from the cache), and bench/scale_up_bench.py's timed applies compile nothing once the
engine's warm_up has run."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest
from numba import njit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from compile_watch import CompileWatch  # noqa: E402
from test_scale_up_static_cache import rows  # noqa: E402

NOTHING = {"numba_s": 0.0, "numba": [], "cupy_kernels": 0}


@njit
def _total(x):  # type: ignore[no-untyped-def]
    return x.sum()


def test_a_compile_is_recorded_once() -> None:
    with CompileWatch() as first:
        assert _total(np.arange(4, dtype=np.int16)) == 6
    with CompileWatch() as again:
        assert _total(np.arange(4, dtype=np.int16)) == 6
    assert first.found["numba_s"] > 0
    assert first.found["numba"] == [f"{__name__}._total(array(int16, 1d, C))"]
    assert again.found == NOTHING


def test_kernels_added_to_cupys_cache_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CuPy's cache folder is $CUPY_CACHE_DIR (CuPy 14 has no public function naming it;
    session 22's first device call stopped on the one this module called)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(tmp_path / "kernels"))
    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))  # as if imported
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "old.cubin").write_bytes(b"")
    with CompileWatch() as watch:
        (tmp_path / "kernels" / "new.cubin").write_bytes(b"")
    assert watch.found["cupy_kernels"] == 1


def test_the_scale_up_rows_compile_nothing_in_their_applies(tmp_path: Path) -> None:
    for row in rows(tmp_path, "watch", "--churn", "2"):
        assert row["exact"] is True
        assert row["compiled"] == NOTHING, row["pattern"]
        assert [c["compiled"] for c in row["churn"]] == [NOTHING, NOTHING], row["pattern"]
