"""One default per GPU setting: the kernel's compile-time defaults (layout.cuh), the
KernelConfig the host compiles with, GpuEngine's keyword arguments and the service's and
CLI's gpu_* options (dcsm/gpu_options.py) must name the same values."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields

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
