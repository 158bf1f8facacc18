"""Matching engines behind one interface (see :mod:`dcsm.engine.interface`)."""

from .interface import BatchResult, Counts, Deltas, Engine, make_engine, warm_up

__all__ = ["BatchResult", "Counts", "Deltas", "Engine", "make_engine", "warm_up"]
