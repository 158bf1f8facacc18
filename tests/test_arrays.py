"""dcsm.arrays.unique_sorted against np.unique."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.arrays import unique_sorted


@pytest.mark.parametrize("n", [0, 1, 2, 1000])
@pytest.mark.parametrize("high", [3, 2**62])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_equals_numpy_unique(n: int, high: int, dtype: type) -> None:
    x = np.random.default_rng(n).integers(0, min(high, np.iinfo(dtype).max), n).astype(dtype)
    got = unique_sorted(x)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np.unique(x))


def test_flattens_like_numpy_unique() -> None:
    x = np.array([[5, 1], [1, 9], [5, 5]], np.int64)
    np.testing.assert_array_equal(unique_sorted(x), [1, 5, 9])
