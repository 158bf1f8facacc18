"""Choosing and building an engine: ``make_engine("auto" | "cpu" | "gpu")``, the GPU probe and
the device's name, and the JIT warm-up. Kept apart from :mod:`dcsm.engine.interface` so the
interface never imports its own implementations (the GPU engine imports the interface)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

import numpy as np

from ..errors import BackendUnavailable
from ..model import Pattern, UpdateBatch
from .interface import Engine


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy  # noqa: F401

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_name(backend: str) -> str:
    """The device the service's engine runs on: ``cpu``, or the GPU's name (nvidia-smi, else
    CuPy; this host's GPU)."""
    if backend != "gpu":
        return "cpu"
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip().splitlines()  # fmt: skip
        if out and out[0].strip():
            return out[0].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        import cupy

        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:
        return "gpu"


def make_engine(backend: str = "auto", *, gpu_options: Mapping[str, float] | None = None) -> Engine:
    """``backend``: "cpu", "gpu", or "auto" (GPU when CuPy and a device are present);
    ``gpu_options``: keyword arguments of ``GpuEngine`` (capacities, batching), used when it
    is chosen."""
    if backend not in ("auto", "cpu", "gpu"):
        raise BackendUnavailable(f"unknown backend {backend!r}; choose auto, cpu or gpu")
    if backend == "gpu" or (backend == "auto" and gpu_available()):
        if not gpu_available():
            raise BackendUnavailable(
                "backend gpu needs CuPy (pip install 'dcsm[gpu]') and a CUDA device"
            )
        from ..gpu.engine import GpuEngine  # imported only when chosen

        return GpuEngine(**dict(gpu_options or {}))  # type: ignore[arg-type]
    from .cpu import CpuEngine

    return CpuEngine()


def warm_up(backend: str = "auto") -> None:
    """Run every engine entry point once on throwaway engines so JIT compilation (numba,
    seconds on a cold cache) happens before readiness, not on the first real update:
    matching and counting, static matching, bulk load, export, and the pool compaction that
    a growing graph triggers (about 40k insertions fill the initial pool)."""
    eng = make_engine(backend)
    tri = Pattern.build("warm", [None, None, None], [(0, 1, None), (1, 2, None), (0, 2, None)])
    eng.register(0, tri, from_seq=0)
    eng.register(1, tri, from_seq=0, count_only=True)
    eng.apply(UpdateBatch.from_arrays(np.array([1, 1, 1, -1]), np.array([1, 2, 1, 1]),
                                      np.array([2, 3, 3, 2])))  # fmt: skip
    eng.count_static(tri)
    eng.match_static(tri)
    graph = eng.export_graph()
    eng.close()
    eng = make_engine(backend)
    eng.load_graph(graph)
    rng = np.random.default_rng(0)
    u, v = rng.integers(0, 4000, 40_000), rng.integers(0, 4000, 40_000)
    keep = u != v
    eng.apply(UpdateBatch.from_arrays(np.ones(int(keep.sum())), u[keep], v[keep], first_seq=4))
    eng.close()
