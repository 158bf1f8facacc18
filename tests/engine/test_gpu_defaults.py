"""One default per GPU setting: the kernel's compile-time defaults (layout.cuh), the
KernelConfig the host compiles with, GpuEngine's keyword arguments and the service's and
CLI's gpu_* options (dcsm/gpu_options.py) must name the same values."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields

import numba
import pytest

import dcsm.gpu.engine as engine_module
from dcsm.gpu.engine import GpuEngine
from dcsm.gpu.loader import SOURCE, KernelConfig
from dcsm.gpu_options import GPU_OPTIONS


def test_layout_defaults_are_the_kernel_configs() -> None:
    text = SOURCE.with_name("layout.cuh").read_text()
    given = dict(re.findall(r"#ifndef (\w+)\n#define \1 (\w+)", text))
    cfg = KernelConfig()
    named = [f.name for f in fields(cfg) if f.name != "extra"]
    assert {n: int(given[n.upper()]) for n in named} == {n: getattr(cfg, n) for n in named}


def test_options_defaults_are_the_engines() -> None:
    params = inspect.signature(GpuEngine.__init__).parameters
    assert {k: o.default for k, o in GPU_OPTIONS.items()} == {
        k: params[k].default for k in GPU_OPTIONS
    }


@pytest.mark.parametrize(
    ("asked", "env", "cores", "want"),
    [
        (-1, None, 16, 4),  # auto on a host of 8 cores or more
        (-1, None, 4, 0),  # auto on a small host: the calling thread alone
        (-1, "2", 16, 2),  # $DCSM_HOST_THREADS decides what auto picks
        (-1, "0", 16, 0),
        (3, "2", 2, 3),  # asked for: the environment and the cores do not matter
        (0, "4", 16, 0),
        (1 << 20, None, 16, numba.config.NUMBA_NUM_THREADS),  # never more than numba's
    ],
)
def test_host_threads_picks(
    asked: int, env: str | None, cores: int, want: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    if env is None:
        monkeypatch.delenv("DCSM_HOST_THREADS", raising=False)
    else:
        monkeypatch.setenv("DCSM_HOST_THREADS", env)
    monkeypatch.setattr(engine_module.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert engine_module._host_threads(asked) == min(want, numba.config.NUMBA_NUM_THREADS)
