"""Array helpers for paths that handle millions of values at once."""

from __future__ import annotations

import numpy as np


def unique_sorted(x: np.ndarray) -> np.ndarray:
    """The distinct values of integer array ``x`` (flattened), ascending: ``np.unique(x)``
    without NumPy's hash-table path.

    Since NumPy 2.3 a bare ``np.unique(x)`` of integers goes through a hash table, which for
    millions of distinct values is 30-100x slower than one sort and one comparison (8.1 s
    against 0.25 s for 5.7M int64 keys on a 2-core host, NumPy 2.4; numpy/numpy#28375
    tracks that path). ``return_index``/``return_counts`` still take the sort path."""
    s = np.sort(x, axis=None)
    if s.size < 2:
        return s
    keep = np.empty(s.size, np.bool_)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
