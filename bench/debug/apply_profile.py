"""Where one GpuEngine.apply call spends its time: the host's steps as a timeline (each
wrapped engine step's start and end, ms after the call began: admission, encoding, the
ring's writes, the pumps, ...), and the device's (per batch: size, taken by the updater,
first match started, last update finished). ``--cprofile`` adds cProfile's table (its hooks
slow every Python call, so the timeline then runs late).

    python3 -P bench/debug/apply_profile.py [--data DIR] [--query Q_0] [--stream insertion10] \
        [--batch-cap 4096 16384] [--piece 4096] [--blocks 132] [--cprofile] [--rounds 40]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from gpu_bench import host_cpu  # noqa: E402

from dcsm.gpu import layout as L  # noqa: E402
from dcsm.gpu.call_result import CallResult  # noqa: E402
from dcsm.gpu.device_clock import DeviceClock  # noqa: E402
from dcsm.gpu.engine import GpuEngine  # noqa: E402
from dcsm.gpu.rings import MatchRows  # noqa: E402
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph  # noqa: E402
from dcsm.model import UpdateBatch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data"))
    )
    ap.add_argument("--query", default="Q_0")
    ap.add_argument("--stream", default="insertion10")
    ap.add_argument("--batch-cap", type=int, nargs="+", default=[4096])
    ap.add_argument("--piece", type=int, default=0, help="updates sent at a time (0: default)")
    ap.add_argument("--blocks", type=int, default=0, help="the kernel's grid (0: as many as fit)")
    ap.add_argument("--cprofile", action="store_true", help="also cProfile the timed apply")
    ap.add_argument(
        "--rounds", type=int, default=0,
        help="then time this many applies, each with a query of its own as gpu_bench "
        "registers them, a line each (the light rows' two modes)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.piece:
        import dcsm.gpu.engine as ge

        ge._PIECE = ge._PIECE_MAX = args.piece
    for cap in args.batch_cap:
        print(f"== batch_cap {cap}")
        profile(args, cap)


def at(b: UpdateBatch, first_seq: int) -> UpdateBatch:
    """b's updates (their labels as given), numbered from first_seq."""
    return UpdateBatch.from_arrays(b.op, b.u, b.v, b.label, first_seq=first_seq)


def inverse(b: UpdateBatch, first_seq: int) -> UpdateBatch:
    """b's updates undone, last first, numbered from first_seq."""
    return UpdateBatch.from_arrays(-b.op[::-1], b.u[::-1], b.v[::-1], b.label[::-1],
                                   first_seq=first_seq)  # fmt: skip


def profile(args: argparse.Namespace, batch_cap: int) -> None:
    og = args.data / "oracle-github"
    graph = "initial90.graph" if args.stream == "insertion10" else "full.graph"
    stream = read_csm_stream(og / f"{args.stream}.stream")
    eng = GpuEngine(batch_cap=batch_cap, blocks=args.blocks or None)
    eng.load_graph(read_graph(og / graph))
    eng.register(0, read_csm_query(og / "queries" / args.query), from_seq=0, count_only=True)
    # Warm-up (numba compilation of the host decoders): a few updates and their inverse.
    k = 200
    eng.apply(at(stream.slice(0, k), 0))
    eng.apply(inverse(stream.slice(0, k), k))
    batch = at(stream, 2 * k)
    eng.apply(batch)
    seq = 2 * k + len(batch)
    for _ in range(4):  # steady state: undo and redo, untimed
        res = eng.apply(inverse(batch, seq))
        seq += len(batch)
        res = eng.apply(at(batch, seq))
        seq += len(batch)
    eng.apply(inverse(batch, seq))
    batch = at(batch, seq + len(batch))
    steps: list[tuple[str, float, float]] = []  # (step, start, end), epoch s
    unwrap = wrap_steps(eng, steps)
    before = eng._get_state()[0]
    prof = cProfile.Profile()
    t0 = time.time()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    p0 = time.perf_counter()
    if args.cprofile:
        prof.enable()
    res = eng.apply(batch)
    prof.disable()
    wall = time.perf_counter() - p0
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    unwrap()
    print(
        f"apply: {wall * 1e3:.2f} ms; device: first start {1e3 * (res.started.min() - t0):.2f} ms, "
        f"last finish {1e3 * (res.finished.max() - t0):.2f} ms after the call began; "
        f"{faults} page faults"
    )
    host_timeline(steps, t0)
    batches(eng.last_timeline, t0)
    call_steps(before, eng._get_state()[0])
    print(eng.updater_profile(), eng.stats())
    if args.cprofile:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
    if args.rounds:
        undo_at = int(batch.seq[-1]) + 1
        eng.apply(inverse(batch, undo_at))
        eng.unregister(0, from_seq=undo_at + len(batch))
        rounds(eng, args, undo_at + len(batch))
    eng.close()


_ROUND_STEPS = ("look_up_parallel", "admit_looked_up", "_encode", "ring.commit", "_pump")


def rounds(eng: GpuEngine, args: argparse.Namespace, seq: int) -> None:
    """``args.rounds`` timed applies of the stream, each undone after, each with a query
    registered for it alone (as bench/gpu_bench.py times a row): a line each with the
    apply's time, its batches, when the device took the first and started and finished
    matching, the host's main steps (ms), the core the host thread last ran on, and where the
    apply sat: its query's slot, its first tau's update slot (tau0 % maxu), the input ring's
    and the output ring's positions (what a registration changes for the rows after it)."""
    og = args.data / "oracle-github"
    stream = read_csm_stream(og / f"{args.stream}.stream")
    query = read_csm_query(og / "queries" / args.query)
    print("round  apply  batches  taken  start  finish  " + "  ".join(_ROUND_STEPS)
          + "  cpu  slot  tau_slot  in_pos  out_pos")  # fmt: skip
    for r in range(args.rounds):
        batch = at(stream, seq)
        eng.register(r + 1, query, from_seq=seq, count_only=True)
        where = (eng._slots._of[r + 1], eng._next_tau % eng.cfg.maxu,
                 eng._ring.tail % eng._ring.cap, eng._out_head)  # fmt: skip
        eng.unregister(r + 1, from_seq=seq + len(batch))
        steps: list[tuple[str, float, float]] = []
        unwrap = wrap_steps(eng, steps)
        t0 = time.time()
        p0 = time.perf_counter()
        res = eng.apply(batch)
        wall = time.perf_counter() - p0
        unwrap()
        taken = eng.last_timeline["taken"]
        ms = {name: 0.0 for name in _ROUND_STEPS}
        for name, a, b in steps:
            if name in ms:
                ms[name] += 1e3 * (b - a)
        cpu = host_cpu()
        print(f"{r:5d} {1e3 * wall:6.2f} {len(np.unique(taken)):8d} "
              f"{1e3 * (taken.min() - t0):6.2f} {1e3 * (res.started.min() - t0):6.2f} "
              f"{1e3 * (res.finished.max() - t0):6.2f}  "
              + "  ".join(f"{ms[n]:.3f}" for n in _ROUND_STEPS) + f"  {cpu}  "
              + "  ".join(str(int(x)) for x in where))  # fmt: skip
        seq += len(batch)
        eng.apply(inverse(batch, seq))
        seq += len(batch)


# The host's steps of an apply call that the timeline shows: engine methods, and the
# functions gpu/engine.py calls by their module-level names.
_METHODS = ("_check_batch", "_launch", "_vertices_in_reach", "_pools_in_reach", "_encode",
            "_pump", "_settle")  # fmt: skip
_FUNCTIONS = ("admit", "look_up_parallel", "admit_looked_up", "CallResult")
# The parts of a pump (engine methods, functions by module-level name, and methods of the
# classes a pump calls into): timed too, left out of the timeline (their time is _pump's),
# shown in the totals and, for the slowest pumps, one by one.
_PUMP_METHODS = ("_check_error", "_free_finished_slots")
_PUMP_FUNCTIONS = ("drain_done",)
_PUMP_CLASS_METHODS = ((CallResult, "add_count_rows"), (CallResult, "add_seen"),
                       (MatchRows, "read"), (DeviceClock, "tend"))  # fmt: skip
_PUMP_PARTS = (set(_PUMP_METHODS) | set(_PUMP_FUNCTIONS) | {"ring.flush"}
               | {f"{c.__name__}.{m}" for c, m in _PUMP_CLASS_METHODS})  # fmt: skip


def wrap_steps(eng: GpuEngine, steps: list[tuple[str, float, float]]) -> Callable[[], None]:
    """Record every call of the steps above, and of the input ring's write, room and commit,
    into ``steps`` as (name, start, end) in epoch seconds; returns what undoes the wrapping."""
    import dcsm.gpu.engine as ge

    def timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any, **k: Any) -> Any:
            t = time.time()
            out = f(*a, **k)
            steps.append((name, t, time.time()))
            return out

        return call

    undo: list[Callable[[], None]] = []
    for name in _METHODS + _PUMP_METHODS:
        setattr(eng, name, timed(name, getattr(eng, name)))
        undo.append(lambda n=name: delattr(eng, n))
    for name in _FUNCTIONS + _PUMP_FUNCTIONS:
        real = getattr(ge, name)
        setattr(ge, name, timed(name, real))
        undo.append(lambda n=name, r=real: setattr(ge, n, r))
    for cls, name in _PUMP_CLASS_METHODS:
        real = getattr(cls, name)
        setattr(cls, name, timed(f"{cls.__name__}.{name}", real))
        undo.append(lambda c=cls, n=name, r=real: setattr(c, n, r))
    ring = eng._ring
    for name in ("write", "room", "commit", "flush"):
        setattr(ring, name, timed(f"ring.{name}", getattr(ring, name)))
        undo.append(lambda n=name: delattr(ring, n))

    def unwrap() -> None:
        for u in undo:
            u()

    return unwrap


def call_steps(before: np.ndarray, after: np.ndarray) -> None:
    """The updater's mean microseconds per batch in each step and phase during the timed
    call alone (updater_profile's figures cover every call since the engine started)."""

    def delta(field: str) -> int:
        return int(after[field]) - int(before[field])

    n = delta("batches")
    print(f"timed call: {n} batches of {delta('batched_updates')} updates, "
          f"{delta('appends')} appends, {delta('new_runs')} new runs")  # fmt: skip
    if not n:
        return
    for field, names in (("phase_ns", L.UPDATER_PHASES), ("step_ns", L.UPDATER_STEPS)):
        d = (after[field].astype(np.int64) - before[field].astype(np.int64)) / n / 1e3
        means = {k: round(float(x), 1) for k, x in zip(names, d, strict=True) if k and x}
        print(f"  {field} us/batch:", means)
    # JOB_TRACE=1 builds: each job's time split at its first and last task's claims.
    d = (after["trace_ns"].astype(np.int64) - before["trace_ns"].astype(np.int64)) / n / 1e3
    split = {
        name: tuple(round(float(x), 1) for x in d[:, k])
        for k, name in enumerate(L.JOB_NAMES)
        if d[:, k].any()
    }
    if split:
        print(f"  trace us/batch ({', '.join(L.JOB_TRACE_PARTS)}):", split)
    # JOB_TRACE=2 builds: each task's own time.
    slowest = (after["task_slowest_ns"].astype(np.int64) - before["task_slowest_ns"]) / n / 1e3
    hist = after["task_hist"].astype(np.int64) - before["task_hist"].astype(np.int64)
    for k, name in enumerate(L.JOB_NAMES):
        if not hist[:, k].any():
            continue
        runs = "; ".join(
            f"{who} {task_buckets(hist[r, k])}" for r, who in enumerate(L.TASK_RUNNERS)
            if hist[r, k].any()
        )  # fmt: skip
        print(f"  tasks {name}: slowest {slowest[k]:.1f} us/batch; {runs}")


def task_buckets(counts: np.ndarray) -> str:
    """A task-time histogram (State.task_hist) as 'count@upper bound' for its non-empty
    buckets: bucket b holds tasks of [2^b, 2^(b+1)) * 256 ns."""
    return " ".join(
        f"{int(c)}@<{(2 << b) * 0.256:g}us" if b < len(counts) - 1 else f"{int(c)}@more"
        for b, c in enumerate(counts) if c
    )  # fmt: skip


def host_timeline(steps: list[tuple[str, float, float]], t0: float) -> None:
    """The host's steps in order (ms after the call began; pumps merged into one line a run
    of them, with their count), then each step's total."""
    print("host: step  start  end (ms)")
    run: list[tuple[str, float, float]] = []

    def flush() -> None:
        if run:
            n = f" x{len(run)}" if len(run) > 1 else ""
            print(f"  {run[0][0]}{n}  {1e3 * (run[0][1] - t0):.3f}  {1e3 * (run[-1][2] - t0):.3f}")
            run.clear()

    for step in sorted(steps, key=lambda s: s[1]):
        if step[0] in _PUMP_PARTS:
            continue
        if run and step[0] != run[0][0]:
            flush()
        run.append(step)
    flush()
    totals: dict[str, float] = {}
    for name, a, b in steps:
        totals[name] = totals.get(name, 0.0) + b - a
    print("host totals (ms):", {k: round(1e3 * v, 3) for k, v in totals.items()})
    pumps = sorted((s for s in steps if s[0] == "_pump"), key=lambda s: s[1] - s[2])[:5]
    print("slowest pumps: start, end (ms), then their parts (us)")
    for _, a, b in sorted(pumps, key=lambda s: s[1]):
        parts: dict[str, float] = {}
        for name, x, y in steps:
            if name in _PUMP_PARTS and a <= x and y <= b:
                parts[name] = parts.get(name, 0.0) + 1e6 * (y - x)
        print(f"  {1e3 * (a - t0):.3f}  {1e3 * (b - t0):.3f}  "
              + "  ".join(f"{k} {v:.1f}" for k, v in parts.items()))  # fmt: skip


def batches(line: dict, t0: float) -> None:
    """One row per batch the updater took: its size, when it was taken, when its first
    match started and its last update finished (ms after the call began)."""
    taken = line.get("taken")
    if taken is None or not len(taken):
        return
    order = np.argsort(taken, kind="stable")
    t = taken[order]
    cuts = np.nonzero(np.diff(t) > 0)[0] + 1
    print("batch  size  taken  first-start  last-finish (ms)")
    for i, idx in enumerate(np.split(order, cuts)):
        print(
            f"{i:5d} {len(idx):5d} {1e3 * (taken[idx[0]] - t0):6.2f} "
            f"{1e3 * (line['started'][idx].min() - t0):6.2f} "
            f"{1e3 * (line['finished'][idx].max() - t0):6.2f}"
        )


if __name__ == "__main__":
    main()
