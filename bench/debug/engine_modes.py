"""What sets a light row's mode: several engines in one process, each timed over a few
rounds as bench/gpu_bench.py times a row (a query registered for each apply, the apply
undone after), then stopped, relaunched on the same memory and timed again.

In turns of the oracle count rows (sessions 30-37), a light row took ~0.4-0.5 ms more in
some runs than in others; the light rows of one engine moved together, and so did the two
engines of one process, but not adjacent processes (bench/debug/turn_modes.py). Caching
allocators hand a closed engine's memory to the next, so gpu_bench's two engines of a
process may well share their addresses: here each engine is only stopped, so that every
engine's memory is new (--close-each: as gpu_bench does). If the modes follow the engine
here, its memory sets them; if they change at a relaunch, the launch (where block 0, the
updater warps, runs); if they follow the core the host thread runs on (--cpus pins each
engine's to a core of its own), the host; if every engine of a process shares one, the
process. A line per (engine, launch): the applies' median, least and largest ms, the SM of
block 0 (with DCSM_KERNEL_DEFINES=-DRECORD_SM=1, else ?), the core the host thread last ran
on (its hyperthread siblings, the cores of the process's threads running beside it) and how
fast it ran a fixed piece of Python right after the applies, the NUMA nodes of the pinned
done and input rings' pages, and the low bits of the device state's and batch's addresses.
Then a line per engine, once it has stopped: a store and system fence, and a dependent load,
through its own pinned done ring (heavy rows moved with the light ones, ~8 % against ~27 %:
the device's side, its completions through host memory among it, is a suspect too).

    DCSM_KERNEL_DEFINES=-DRECORD_SM=1 python3 -P bench/debug/engine_modes.py [--data DIR] \
        [--query Q_1] [--stream deletion10] [--engines 8] [--launches 2] [--rounds 7] \
        [--cpus 0,2,4,6,8,10,12,14] [--close-each]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_bench import Runner, host_cpu, host_python_us  # noqa: E402

from dcsm.gpu.engine import GpuEngine  # noqa: E402


def numa_nodes(address: int) -> str:
    """The NUMA nodes of the pages of the mapping holding ``address`` ("N0=12 N1=4"), from
    /proc/self/numa_maps; "?" where the kernel does not say."""
    start = None
    for line in Path("/proc/self/maps").read_text().splitlines():
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= address < hi:
            start = lo
            break
    try:
        lines = Path("/proc/self/numa_maps").read_text().splitlines()
    except OSError:
        return "?"
    for line in lines:
        if start is not None and int(line.split()[0], 16) == start:
            return " ".join(w for w in line.split() if w[0] == "N" and "=" in w) or "?"
    return "?"


def thread_cores() -> tuple[int, list[int], str]:
    """The core this thread last ran on, the cores of the process's other threads that are
    running now (numba's OpenMP workers spin a while after each parallel call), and this
    core's hyperthread siblings."""

    def stat(path: Path) -> list[str]:
        return path.read_text().rsplit(")", 1)[1].split()

    cpu = host_cpu()
    own = Path("/proc/thread-self").resolve().name
    busy = []
    for task in Path("/proc/self/task").iterdir():
        try:
            f = stat(task / "stat")
        except OSError:
            continue
        if task.name != own and f[0] == "R":
            busy.append(int(f[36]))
    sib = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
    return cpu, sorted(busy), sib.read_text().strip() if sib.exists() else "?"


# One thread: n stores into a host-mapped buffer, each followed by a system fence (as the
# kernel completes an update), then n dependent loads from it (as the updater polls the
# host's tail); ns for each, by %globaltimer.
_PROBE = r"""
typedef unsigned long long u64;
extern "C" __global__ void host_memory_probe(u64* buf, int n, u64* out) {
    u64 t0, t1, t2, x = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int i = 0; i < n; ++i) {
        *(volatile u64*)(buf + (i & 63)) = (u64)i;
        __threadfence_system();
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    for (int i = 0; i < n; ++i) x = *(volatile u64*)(buf + ((x + i) & 63));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t2));
    out[0] = t1 - t0; out[1] = t2 - t1; out[2] = x;
}
"""


def host_memory_ns(eng: GpuEngine, n: int = 2000) -> str:
    """A store and system fence, and a dependent load, into the engine's own pinned done ring
    (the mapping its completions take), in ns each, with the kernel stopped: whether a mode
    follows where the process's pinned memory lies. The ring's first 512 bytes are
    overwritten: call it after the engine's last apply."""
    import cupy as cp

    kernel = cp.RawKernel(_PROBE, "host_memory_probe")
    out = cp.zeros(3, cp.uint64)
    kernel((1,), (1,), (cp.uint64(eng._pinned["done"].ptr), cp.int32(n), out))
    fence, read, _ = (int(x) for x in out.get())
    return f"host memory: store+fence {fence / n:.0f} ns, load {read / n:.0f} ns"


def where(eng: GpuEngine) -> str:
    sm = int(eng._dstat["updater_sm"][0])
    cpu, busy, siblings = thread_cores()
    st, batch = (eng._d[k].data.ptr & 0xFFFFFF for k in ("st", "batch"))
    return (
        f"sm {sm - 1 if sm else '?':>3}  cpu {cpu:>2} (siblings {siblings}; running beside it "
        f"{busy})  python {host_python_us():.0f} us  "
        f"done [{numa_nodes(eng._done.ctypes.data)}]  in [{numa_nodes(eng._in.ctypes.data)}]  "
        f"st {st:06x}  batch {batch:06x}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data"))
    )
    ap.add_argument("--query", default="Q_1")
    ap.add_argument("--stream", default="deletion10", choices=("insertion10", "deletion10"))
    ap.add_argument("--engines", type=int, default=8)
    ap.add_argument("--launches", type=int, default=2, help="kernel launches an engine")
    ap.add_argument("--rounds", type=int, default=7, help="timed applies a launch")
    ap.add_argument("--batch-cap", type=int, default=16384)
    ap.add_argument(
        "--cpus", default="",
        help="comma list: engine e's host thread runs on cpus[e %% len] alone (default: where "
        "the OS puts it)",
    )  # fmt: skip
    ap.add_argument(
        "--close-each", action="store_true",
        help="close each engine before the next is made (its device and pinned memory then "
        "serve the next, as in gpu_bench's processes); default: each engine is only stopped, "
        "so that every engine's memory is new",
    )  # fmt: skip
    args = ap.parse_args()
    cpus = [int(c) for c in args.cpus.split(",") if c]
    og = args.data / "oracle-github"
    graph = og / ("initial90.graph" if args.stream == "insertion10" else "full.graph")
    query = og / "queries" / args.query
    print(f"{args.query} {args.stream}: {args.engines} engines, {args.launches} launches each, "
          f"{args.rounds} timed applies a launch (ms)")  # fmt: skip
    kept: list[Runner] = []
    for e in range(args.engines):
        if cpus:
            os.sched_setaffinity(0, {cpus[e % len(cpus)]})  # this thread's, not numba's
        run = Runner(graph, og / f"{args.stream}.stream", args.batch_cap)
        for launch in range(args.launches):
            if launch:
                run.engine.stop()  # the next apply launches the kernel again
            run.time_once(query, True)  # untimed: numba, the launch, the pools' first look
            ms = [1e3 * run.time_once(query, True)[0] for _ in range(args.rounds)]
            print(f"engine {e} launch {launch}  median {statistics.median(ms):6.3f}  "
                  f"min {min(ms):6.3f}  max {max(ms):6.3f}  {where(run.engine)}",
                  flush=True)  # fmt: skip
        run.engine.stop()  # its kernel ends; with --close-each its memory serves the next
        print(f"engine {e}  {host_memory_ns(run.engine)}", flush=True)
        if args.close_each:
            run.close()
        else:
            kept.append(run)
    for run in kept:
        run.close()


if __name__ == "__main__":
    main()
