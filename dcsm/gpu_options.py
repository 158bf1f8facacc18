"""The GPU engine's options as users set them: the service's ``gpu_*`` settings and the
``--gpu-*`` flags of ``dcsm serve``, ``replay`` and ``match``. Each is the ``GpuEngine``
keyword argument of the same name without the prefix. One table gives their defaults and
help to all of them, so that the settings, the flags and the engine arguments cannot drift
apart."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NamedTuple

from dcsm.argtypes import number, whole
from dcsm.gpu.loader import KernelConfig  # the kernel's sizes (no CUDA needed to import)

_K = KernelConfig()


def _power_of_two(text: str) -> int:
    x = int(text)
    if x < 1 or x & (x - 1):
        raise argparse.ArgumentTypeError(f"must be a power of two, got {x}")
    return x


_power_of_two.__name__ = "int"


class GpuOption(NamedTuple):
    name: str  # the GpuEngine keyword argument
    default: float
    help: str
    parse: Callable[[str], float]  # the flag's type
    metavar: str = "N"
    choices: tuple[int, ...] | None = None


GPU_OPTIONS: dict[str, GpuOption] = {
    o.name: o
    for o in (
        GpuOption("pool_slabs", 0, "slabs of 32 adjacency entries (524 B each with their "
                  "bookkeeping) in the device pool; 0: sized from the graph (1.5x what it "
                  "needs) and grown as the stream outgrows it; N: exactly N", whole(0)),
        GpuOption("max_versions", 0, "vertex versions the device holds; 0: sized and grown "
                  "like the pool", whole(0)),
        GpuOption("max_vertices", 1 << 22, "vertices the device tables hold at first (they "
                  "double, between two batches, when a graph or stream needs more)",
                  whole(1)),
        GpuOption("batch_size", _K.batch_b, "updates that close a device batch at once (b)",
                  whole(1)),
        GpuOption("batch_timeout_us", _K.batch_timeout_ns / 1000, "how long a device batch "
                  "waits for more updates after its first (t, us); 0: it closes as soon as "
                  "nothing more is waiting", number(0, or_equal=True), "US"),
        GpuOption("batch_cap", _K.batch_cap, "most updates one device batch takes under a "
                  "backlog. Larger batches copy a hub's list once for more updates: 16,384 "
                  "against 4,096 took the oracle-github count rows from 0.173 to 0.151 s and "
                  "the updater's time on a 43M-edge triangle insertion from 0.78 to 0.33 s",
                  whole(1)),
        GpuOption("small_path", _K.small_path, "batches of at most 32 updates applied by one "
                  "updater warp without the job pipeline: 0 never, 1 where the kernel's "
                  "measured costs say it is cheaper, 2 always", int, "{0,1,2}", (0, 1, 2)),
        GpuOption("maxu", _K.maxu, "update slots: how many updates the kernel holds at once "
                  "(a power of two >= batch_cap). Fewer keep fewer replaced lists waiting to "
                  "be freed, which matters with tail_div 0: a 43M-edge insertion at batches "
                  "of 16,384 then keeps 1.96x the bytes it uses with 32,768 slots (2.5x with "
                  "65,536) at 5.6M instead of 6.1M updates/s", _power_of_two),
        GpuOption("tail_div", _K.tail_div, "a batch that inserts into a neighbour list appends a "
                  "sorted tail in the list's slab run, keeping the rest, while the tail holds "
                  "at most 1/N of it; else it copies the whole list, merged. Tails copy 6x "
                  "less on a 43M-edge triangle insertion (6.9M updates/s, 1.9x the bytes it "
                  "uses) but lookups search two runs: a 4-cycle there ran 20 percent slower "
                  "than with 0 (always copy) before both runs were searched in lockstep, "
                  "which gave 7 percent back on a 10M-edge graph", whole(0)),
        GpuOption("pool_compact", 0, "1: a self-sized slab pool is also compacted (its runs "
                  "moved to the front) whenever free runs waiting in its rings hold a fifth "
                  "of it: with tail_div 0, a 43M-edge insertion at batches of 16,384 then "
                  "keeps 2.0x the bytes it uses instead of 2.5x, but at 4.7M updates/s "
                  "instead of 6.0M; 0: only where its bump region alone would make it grow",
                  int, "{0,1}", (0, 1)),
        GpuOption("hub_bitmaps", -1, "bitmaps of hub neighbour lists the executors share: "
                  "counting, a last level's membership tests in a list fixed for a whole "
                  "work item (a 4-cycle's far end) are one bit test each instead of a search "
                  "(the 43M-edge 4-cycle 253K -> 287K updates/s), one bit a vertex each, "
                  "shared by the work items that test one list, carved from a self-sized "
                  "slab pool's free top (no memory of their own; none with gpu_pool_slabs "
                  "given) while a counting query that can use them is registered (a "
                  "4-cycle, not a triangle); -1: one an executor warp, as many as the room "
                  "holds; 0: none",
                  whole(-1)),
        GpuOption("host_threads", -1, "host threads an apply spreads its id lookups and "
                  "update encoding over, so that the device takes fewer, larger batches: "
                  "4 against 0 took the oracle-github count rows from 184.7 to 179.7 ms on "
                  "one H200 host; 0: the calling thread alone; -1: $DCSM_HOST_THREADS where "
                  "set, else 4 on a host of 8 cores or more, else 0 (always 0 under numba's "
                  "workqueue threading layer)", whole(-1)),
    )
}  # fmt: skip


def add_gpu_args(parser: argparse.ArgumentParser, *, with_defaults: bool) -> None:
    """One ``--gpu-*`` flag per option. Without ``with_defaults`` a flag not given is None
    (``dcsm serve``: the setting then comes from the config file or the environment)."""
    group = parser.add_argument_group("GPU engine (--backend gpu, or auto with a GPU)")
    for o in GPU_OPTIONS.values():
        group.add_argument(
            "--gpu-" + o.name.replace("_", "-"), type=o.parse, choices=o.choices,
            metavar=o.metavar, default=o.default if with_defaults else None,
            help=f"{o.help} (default {o.default})",
        )  # fmt: skip


def engine_options(source: object) -> dict[str, float]:
    """``GpuEngine`` keyword arguments from the ``gpu_*`` attributes of ``source`` (the
    service's settings, or parsed ``--gpu-*`` flags)."""
    return {name: getattr(source, "gpu_" + name) for name in GPU_OPTIONS}


def add_engine_flag(parser: argparse.ArgumentParser, example: str) -> None:
    """The benchmarks' repeatable ``--engine KEY=VALUE`` flag: GpuEngine arguments for
    every engine of a run, parsed into ``(key, number)`` pairs (an int, or a float when
    the value has a point)."""
    parser.add_argument(
        "--engine", action="append", default=[], metavar="KEY=VALUE", type=_key_value,
        help=f"a GpuEngine argument for every engine of the run (e.g. {example}); repeatable",
    )  # fmt: skip


def _key_value(text: str) -> tuple[str, float]:
    key, eq, value = text.partition("=")
    if not eq or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, float(value) if "." in value else int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key}: not a number: {value!r}") from None
