"""How the GPU engine sizes its pools when the service leaves them at 0 (no GPU needed)."""

from __future__ import annotations

from dcsm.gpu.engine import auto_capacity


def is_pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def test_half_of_free_memory_in_powers_of_two_within_the_kernel_limits() -> None:
    for free in (10**8, 4 * 10**9, 24 * 10**9, 80 * 10**9, 140 * 10**9):
        slabs, versions = auto_capacity(free)
        assert is_pow2(slabs) and is_pow2(versions)
        assert 1 << 19 <= slabs <= 1 << 25  # entry offsets are 32-bit: 2^26 slabs overflow
        assert 1 << 21 <= versions <= 1 << 24
        if free >= 4 * 10**9:  # above the fixed defaults the share is respected
            assert slabs * 524 + versions * 40 <= free // 2


def test_grows_with_the_device() -> None:
    small, mid, big = (auto_capacity(g * 10**9)[0] for g in (4, 24, 80))
    assert small < mid <= big
