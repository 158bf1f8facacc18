"""Compile and load the GPU kernels, once per configuration.

Everything the persistent kernel's lifetime needs is compiled and loaded here, before it
starts: loading a CUDA module while it runs blocks until it exits (gpu-facts rule 2).
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

SOURCE = Path(__file__).with_name("dcsm_kernel.cu")
_INCLUDE = re.compile(r'^#include "([a-z_]+\.cuh)"$', re.MULTILINE)


def kernel_source(path: Path = SOURCE) -> str:
    """The kernel as one text: each ``#include "part.cuh"`` line of the main file replaced by
    that part (CuPy compiles a string and keys its kernel cache on it, so included headers
    would be neither found nor seen when they change)."""
    return splice(path.read_text())


def splice(text: str) -> str:
    """``text`` with each ``#include "part.cuh"`` line replaced by that part of gpu/."""
    return _INCLUDE.sub(lambda m: SOURCE.with_name(m.group(1)).read_text(), text)


@dataclass(frozen=True)
class KernelConfig:
    """Compile-time sizes of the kernel (layout.cuh's #ifndef defaults name the same values)."""

    n_updaters: int = 4
    batch_b: int = 64
    batch_cap: int = 16384
    qmax: int = 32
    pmax: int = 64
    maxu: int = 1 << 16
    maxi: int = 1 << 19
    maxchunk: int = 1 << 21
    nclass: int = 24
    chunk: int = 1024
    batch_timeout_ns: int = 0
    check: int = 0  # 1: compile in the self-checks (slower; for tests and debugging)
    # Batches of at most 32 updates on updater warp 0 alone (updater_small.cuh): 0 never,
    # 1 where the measured cost models say it is cheaper, 2 always.
    small_path: int = 1
    # Lists as a base plus a tail (docs/delta-lists.md): a batch appends a tail while it holds
    # at most 1/tail_div of the base; 0: every new version is a merged copy.
    tail_div: int = 8
    # Further -D options, e.g. "-DHELP_MASK=0u -DDONATE_EVERY=1000000000" to switch a
    # mechanism off while bisecting a race (default: $DCSM_KERNEL_DEFINES).
    extra: str = ""

    def defines(self) -> tuple[str, ...]:
        fields = asdict(self)
        extra = fields.pop("extra").split()
        return (*(f"-D{k.upper()}={v}" for k, v in fields.items()), *extra)

    @staticmethod
    def extra_from_env() -> str:
        return os.environ.get("DCSM_KERNEL_DEFINES", "")

    def validate(self) -> None:
        # Block 0 (8 warps of 256 threads) holds the updater warps and the collector.
        if not 1 <= self.n_updaters <= 7:
            raise ValueError(f"n_updaters must be 1..7, got {self.n_updaters}")
        if not 1 <= self.batch_b <= self.batch_cap <= 32768:
            raise ValueError(
                f"need 1 <= batch_b <= batch_cap <= 32768, got {self.batch_b}, {self.batch_cap}"
            )
        if self.batch_cap > self.maxu:
            raise ValueError(
                f"batch_cap ({self.batch_cap}) must be at most maxu ({self.maxu}): a batch's "
                "updates hold distinct update slots"
            )
        if self.small_path not in (0, 1, 2):
            raise ValueError(f"small_path must be 0, 1 or 2, got {self.small_path}")
        if self.tail_div < 0:
            raise ValueError(f"tail_div must be >= 0, got {self.tail_div}")
        if not 1 <= self.qmax <= 32:
            raise ValueError(f"qmax must be 1..32, got {self.qmax}")
        for name in ("maxu", "maxi", "maxchunk"):
            x = getattr(self, name)
            if x & (x - 1):
                raise ValueError(f"{name} must be a power of two, got {x}")


@functools.cache
def load_kernel(config: KernelConfig):  # type: ignore[no-untyped-def]
    """The loaded ``dcsm_persistent`` function for ``config`` (cooperative launch), and
    the byte sizes of the structures the host allocates (``dcsm_sizes``: State, Batch,
    Item, Upd, Done, InRec)."""
    import cupy as cp

    config.validate()
    module = cp.RawModule(
        code=kernel_source(),
        options=("-std=c++17", *config.defines()),
        enable_cooperative_groups=True,
    )
    sizes = cp.zeros(6, cp.uint64)
    module.get_function("dcsm_sizes")((1,), (1,), (sizes,))
    names = ("State", "Batch", "Item", "Upd", "Done", "InRec")
    return module.get_function("dcsm_persistent"), dict(
        zip(names, map(int, sizes.get()), strict=True)
    )


def offset_expr(struct: str, field: str) -> str:
    """C expression of the byte offset of ``struct.field`` (NVRTC has neither offsetof nor
    __builtin_offsetof): the field's address minus the struct's, at a made-up address."""
    base = f"reinterpret_cast<const {struct}*>(4096)"
    char = "reinterpret_cast<const char*>"
    return f"(u64)({char}(&{base}->{field}) - {char}({base}))"


@functools.cache
def field_offsets(config: KernelConfig, fields: tuple[tuple[str, str], ...]) -> tuple[int, ...]:
    """Byte offsets of (struct, field) pairs as the kernel lays them out: offsetof over
    layout.cuh compiled with ``config``'s defines (the host mirrors in gpu/layout.py are
    checked against them, field by field, before the kernel first runs)."""
    import cupy as cp

    body = "\n".join(f"    out[{i}] = {offset_expr(s, f)};" for i, (s, f) in enumerate(fields))
    code = splice(f'#include "layout.cuh"\n\nextern "C" __global__ void dcsm_offsets(u64* out) {{\n'
                  f"{body}\n}}\n")  # fmt: skip
    module = cp.RawModule(code=code, options=("-std=c++17", *config.defines()))
    out = cp.zeros(max(1, len(fields)), cp.uint64)
    module.get_function("dcsm_offsets")((1,), (1,), (out,))
    return tuple(int(x) for x in out.get()[: len(fields)])
