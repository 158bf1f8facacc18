"""What a timed section compiled: numba's compiles (not its loads from the on-disk cache) and
the kernels CuPy added to its kernel cache.

A process's first 43M-edge insertion ran at 5.8-6.6M updates/s where the processes after it
on the same install ran at 7.1-7.6M/s (bench/results/gpu/NOTES.md, session 19). A first
run pays alone for what it writes to disk for the next ones, so a benchmark row that says
what its timed applies compiled tells whether that is the difference.

    with CompileWatch() as watch:
        engine.apply(batch)
    watch.found  # {"numba_s": 0.0, "numba": [], "cupy_kernels": 0} when nothing compiled
"""

from __future__ import annotations

import os
import sys
from types import TracebackType
from typing import Any

import numba.core.event as numba_event


def _cupy_cache_dir() -> str:
    """CuPy's kernel cache folder: $CUPY_CACHE_DIR, else its documented default (CuPy 14
    has no public function that names it)."""
    return os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")


def _cupy_cached() -> int:
    """Files in CuPy's kernel cache, or 0 where CuPy was never imported."""
    if "cupy" not in sys.modules:
        return 0
    try:
        return sum(1 for _ in os.scandir(_cupy_cache_dir()))
    except FileNotFoundError:
        return 0


def _compiles(events: list[tuple[float, Any]]) -> tuple[float, list[str]]:
    """The top-level compiles in a numba:compile recording (a compile's callees compile
    inside it): their seconds in all, and each as "module.function(argument types)"."""
    seconds, names, depth, start = 0.0, [], 0, 0.0
    for stamp, event in events:
        if event.is_start:
            if depth == 0:
                start = stamp
                fn = event.data["dispatcher"].py_func
                args = ", ".join(str(a) for a in event.data["args"])
                names.append(f"{fn.__module__}.{fn.__qualname__}({args})")
            depth += 1
        elif event.is_end:
            depth -= 1
            if depth == 0:
                seconds += stamp - start
    return seconds, names


class CompileWatch:
    """Records numba's compiles and CuPy's new cached kernels between ``__enter__`` and
    ``__exit__`` into :attr:`found`: ``numba_s`` (seconds of top-level compiles), ``numba``
    (what they compiled), ``cupy_kernels`` (files added to CuPy's kernel cache)."""

    def __init__(self) -> None:
        self.found: dict[str, Any] = {"numba_s": 0.0, "numba": [], "cupy_kernels": 0}
        self._recording: Any = None
        self._buffer: list[tuple[float, Any]] = []
        self._files = 0

    def __enter__(self) -> CompileWatch:
        self._files = _cupy_cached()
        self._recording = numba_event.install_recorder("numba:compile")
        self._buffer = self._recording.__enter__().buffer
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._recording.__exit__(kind, error, trace)
        seconds, names = _compiles(self._buffer)
        self.found = {
            "numba_s": round(seconds, 3),
            "numba": names,
            "cupy_kernels": max(0, _cupy_cached() - self._files),
        }
