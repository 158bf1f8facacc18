"""The host's side of the device clock's mapping (gpu/device_clock.py), against a thread that
answers pings as updater warp 0's relay() does, in the same HostCtl and DevStatus records."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from dcsm.gpu import device_clock
from dcsm.gpu import layout as L
from dcsm.gpu.device_clock import DeviceClock


@contextmanager
def device(hctl: np.ndarray, dstat: np.ndarray, behind_ns: int) -> Iterator[None]:
    """A device whose clock is ``behind_ns`` behind the host's, answering every new ping
    with its clock, then the ping."""
    stop = threading.Event()

    def relay() -> None:
        last = int(hctl["clock_ping"][0])
        while not stop.is_set():
            ping = int(hctl["clock_ping"][0])
            if ping != last:
                last = ping
                dstat["clock_pong_ns"] = time.time_ns() - behind_ns
                dstat["clock_pong"] = ping

    t = threading.Thread(target=relay, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


@pytest.fixture
def records(monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, np.ndarray]:
    # The answering thread needs the GIL, which the asking loop gives up every 5 ms.
    monkeypatch.setattr(device_clock, "SPIN_NS", 2_000_000_000)
    return np.zeros(1, L.HOST_CTL), np.zeros(1, L.DEV_STATUS)


def test_an_answer_sets_the_offset_within_its_bounds(records: tuple) -> None:
    hctl, dstat = records
    clock = DeviceClock(hctl, dstat)
    clock.at_launch(123)
    behind = 5_000_000_000
    with device(hctl, dstat, behind):
        clock.tend()
    assert int(hctl["clock_ping"][0]) == 1
    assert abs(clock.offset_ns - behind) <= clock.slack_ns
    assert clock.slack_ns < 50_000_000 and len(clock.samples) == 1
    clock.tend()  # within PERIOD_NS of the answer: no new ping
    assert int(hctl["clock_ping"][0]) == 1


def test_an_unanswered_ping_is_asked_again_later(
    records: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    hctl, dstat = records
    monkeypatch.setattr(device_clock, "SPIN_NS", 10_000)
    clock = DeviceClock(hctl, dstat)
    clock.at_launch(123)
    clock.tend()  # nobody answers
    assert clock.offset_ns == 123 and not clock.samples
    clock.tend()  # not before RETRY_NS
    assert int(hctl["clock_ping"][0]) == 1
    time.sleep(device_clock.RETRY_NS / 1e9 + 0.002)
    clock.tend()
    assert int(hctl["clock_ping"][0]) == 2


def test_a_relaunch_asks_again(records: tuple) -> None:
    hctl, dstat = records
    clock = DeviceClock(hctl, dstat)
    clock.at_launch(0)
    with device(hctl, dstat, 7_000_000_000):
        clock.tend()
        clock.at_launch(1)  # the kernel was stopped and launched again
        assert clock.offset_ns == 1
        clock.tend()
    assert int(hctl["clock_ping"][0]) == 2 and len(clock.samples) == 2
    assert abs(clock.offset_ns - 7_000_000_000) <= clock.slack_ns


def test_drift_is_the_slope_of_the_offsets(records: tuple) -> None:
    clock = DeviceClock(*records)
    assert clock.drift_ppm() is None
    t0 = 1_700_000_000 * 10**9
    for k in range(5):  # -7 us a second: the device's clock runs fast
        clock.samples.append((t0 + k * 500_000_000, 1_000_000 - 3_500 * k, 1_000))
    assert clock.drift_ppm() == pytest.approx(-7.0)
