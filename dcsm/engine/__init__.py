"""Matching engines behind one interface (see :mod:`dcsm.engine.interface`); built by
:mod:`dcsm.engine.factory`."""

from .factory import device_name, gpu_available, make_engine, warm_up
from .interface import BatchResult, Counts, Deltas, Engine

__all__ = [
    "BatchResult", "Counts", "Deltas", "Engine", "device_name", "gpu_available", "make_engine",
    "warm_up",
]  # fmt: skip
