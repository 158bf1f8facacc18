"""Latency summaries shared by the demo, the load generator and the service's query stats."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PERCENTILES = (50, 95, 99)


def percentiles(
    values: np.ndarray | Sequence[float], scale: float = 1.0
) -> dict[str, float | None]:
    """``{"p50", "p95", "p99", "max", "n"}`` of ``values`` (any float array-like, shape
    (k,)), each multiplied by ``scale`` (e.g. 1000 for seconds -> ms). With no values the
    percentiles and max are None and ``n`` is 0. NaNs are not expected (they propagate)."""
    a = np.asarray(values, dtype=np.float64).ravel()
    if a.size == 0:
        return {"p50": None, "p95": None, "p99": None, "max": None, "n": 0}
    p50, p95, p99 = (np.percentile(a, PERCENTILES) * scale).tolist()
    return {"p50": p50, "p95": p95, "p99": p99, "max": float(a.max() * scale), "n": int(a.size)}
