"""Where a large insertion's time goes on the host and on the device: issue 17's 43M triangle
row, step by step. The graph and stream are scale_up_bench's (90 % loaded, 10 % inserted in
calls of ``--batch-size``); the triangle is registered in count mode.

    python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz [--engine batch_cap=16384] \
        [--batch-size 1048576] [--out profile.json]

Host steps are wall-clock totals over the whole insertion, measured by wrapping the engine's
own functions (nothing else changes): ``admit``, ``encode``, ``ring write`` (copying into
the input ring, its waits for room excluded), ``pump`` (reading completions and match
records, whether called while the ring is full or while settling), ``ring wait`` (pumping
because the ring was full: the kernel is behind), ``settle`` (waiting at the call's end)
and ``result`` (assembling the call's BatchResult). Device times come from each call's
timeline: when the updater took the first and the last update, and when the last update
finished; the kernel's batches (``batches``: how long each took to read, how far apart they
start, and how many published records waited when each started); the updater's own
profile (busy seconds); and the collector's queue of retired versions not yet freed, as
each pump saw it (``gc_queue_max``, ``gc_queue_mean``); and the slab pool's capacity before
and after the timed calls, with its bump pointer and use at the end, how often the timed
calls compacted it and the reserve the growth rules add (``pool``: a pool that grew took
fresh slabs while frees were pending).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import scale_up_bench as sub  # noqa: E402

import dcsm.gpu.engine as ge  # noqa: E402
from dcsm.gpu import input_ring  # noqa: E402
from dcsm.gpu.call_result import CallResult  # noqa: E402
from dcsm.gpu.input_ring import InputRing  # noqa: E402
from dcsm.graphio import read_graph  # noqa: E402

SPENT: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
GC_QUEUE = {"max": 0, "sum": 0, "looks": 0}
PUBLISHED: list[tuple[float, int]] = []  # (when, input records published to the kernel)


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] += time.perf_counter() - t0
            CALLS[name] += 1

    return wrapper


def instrument() -> None:
    """Wrap the host steps of GpuEngine._apply_stream in timers."""
    ge.admit = timed("admit", ge.admit)
    ge.GpuEngine._encode = timed("encode", ge.GpuEngine._encode)
    pump = timed("pump", ge.GpuEngine._pump)

    def pump_and_look(self: ge.GpuEngine, col: CallResult | None) -> None:
        pump(self, col)
        queue = int(self._dstat["gc_queue"][0])  # retired versions the collector has not freed
        GC_QUEUE["max"] = max(GC_QUEUE["max"], queue)
        GC_QUEUE["sum"] += queue
        GC_QUEUE["looks"] += 1

    ge.GpuEngine._pump = pump_and_look  # type: ignore[method-assign]
    ge.GpuEngine._settle = timed("settle", ge.GpuEngine._settle)
    CallResult.result = timed("result", CallResult.result)
    write = InputRing.write

    def ring_write(self: InputRing, recs: np.ndarray, wait: Callable[[], None],
                   due: np.ndarray | None = None) -> np.ndarray | None:  # fmt: skip
        w0 = SPENT["ring wait"]
        t0 = time.perf_counter()
        out = write(self, recs, timed("ring wait", wait), due)
        SPENT["ring write"] += time.perf_counter() - t0 - (SPENT["ring wait"] - w0)
        CALLS["ring write"] += 1
        return out

    InputRing.write = ring_write  # type: ignore[method-assign]
    flush = InputRing.flush

    def logged_flush(self: InputRing) -> None:
        before = int(self._hctl["in_tail"][0])
        flush(self)
        word = int(self._hctl["in_tail"][0])
        if word != before:
            PUBLISHED.append((time.time(), word >> input_ring._MIRROR_BITS))  # records published

    InputRing.flush = logged_flush  # type: ignore[method-assign]


def batches(taken: np.ndarray, tail0: int, cap: int) -> dict[str, float]:
    """The kernel's batches in one call, from when the updater took each update (tau
    order): a new batch where two consecutive takes are 100 us or more apart. For each,
    how long its records took to read and how far apart batches start; and the backlog at
    a batch's start: records published (``PUBLISHED``) but not yet read, the call's
    records being tail0, tail0 + 1, ... in tau order."""
    starts = np.concatenate([[0], np.nonzero(np.diff(taken) >= 100e-6)[0] + 1])
    ends = np.concatenate([starts[1:], [len(taken)]])
    times = np.array([t for t, _ in PUBLISHED])
    tails = np.array([n for _, n in PUBLISHED])
    at = np.searchsorted(times, taken[starts], "right") - 1
    backlog = np.where(at >= 0, tails[np.maximum(at, 0)], tail0) - (tail0 + starts)
    return {
        "batches": len(starts),
        "mean_size": round(float(np.mean(ends - starts)), 1),
        "read_us_mean": round(float(np.mean(taken[ends - 1] - taken[starts])) * 1e6, 1),
        "cycle_us_mean": round(float(np.mean(np.diff(taken[starts]))) * 1e6, 1)
        if len(starts) > 1
        else 0.0,
        "backlog_p10": int(np.percentile(backlog, 10)),
        "backlog_p50": int(np.percentile(backlog, 50)),
        "backlog_p90": int(np.percentile(backlog, 90)),
        "starts_short_of_cap": round(float(np.mean(backlog < cap)), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True, help="a graph file (scale_up_bench --save-graph)")
    ap.add_argument("--engine", nargs="*", default=[], help="GpuEngine options, key=value")
    ap.add_argument("--batch-size", type=int, default=1 << 20, help="updates per apply call")
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--piece", type=int, default=0, help="updates sent at a time (0: default)")
    ap.add_argument(
        "--mirror-min",
        type=int,
        default=0,
        help="shortest write copied into the device's mirror of the ring (0: default)",
    )
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.piece:
        ge._PIECE = ge._PIECE_MAX = args.piece
    if args.mirror_min:
        input_ring._MIRROR_MIN = args.mirror_min
    initial, stream = sub.split(read_graph(args.graph), args.share, 0)
    opts = {k: int(v) for k, v in (o.split("=") for o in args.engine)}
    eng = ge.GpuEngine(**{**sub.GPU_OPTIONS, **opts})  # type: ignore[arg-type]
    eng.load_graph(initial)
    eng.register(0, sub.PATTERNS["triangle"], from_seq=0, count_only=True)
    warm = stream.slice(0, 1 << 16)  # numba and CuPy first calls, outside the timing
    eng.apply(warm)
    rest = stream.slice(len(warm), len(stream))
    instrument()
    before = sub.updater_seconds(eng)
    slabs_before, compactions_before = eng._nslabs, eng.stats().get("pool_compactions", 0)
    calls = []
    total = 0.0
    positive = 0
    for lo in range(0, len(rest), args.batch_size):
        part = rest.slice(lo, min(len(rest), lo + args.batch_size))
        tail0 = eng._ring.tail
        t0 = time.time()
        res = eng.apply(part)
        t1 = time.time()
        total += t1 - t0
        positive += int(res.counts.count[res.counts.sign > 0].sum())
        tl = eng.last_timeline
        calls.append({
            "updates": len(part), "seconds": round(t1 - t0, 4),
            "first_taken_s": round(float(tl["taken"].min()) - t0, 4),
            "last_taken_s": round(float(tl["taken"].max()) - t0, 4),
            "last_finished_s": round(float(tl["finished"].max()) - t0, 4),
            "kernel_batches": batches(tl["taken"], tail0, opts.get("batch_cap", 4096)),
        })  # fmt: skip
    spent = sub.updater_spent(before, eng)
    s = eng.stats()
    pool = {"pool_slabs_before": slabs_before, "pool_slabs_after": s["pool_slabs"],
            "slab_bump": s["slab_bump"], "slabs_in_use": s["slabs_in_use"],
            "compactions": s.get("pool_compactions", 0) - compactions_before,
            "reserve_slabs": eng._reserves()[1]}  # fmt: skip
    eng.close()
    n = len(rest)
    out = {
        "graph": args.graph, "engine": opts, "piece": args.piece or None,
        "mirror_min": input_ring._MIRROR_MIN, "updates": n, "seconds": round(total, 4),
        "updates_per_s": round(n / total), "positive": positive,
        "host_s": {k: round(v, 4) for k, v in SPENT.items()},
        "host_ns_per_update": {k: round(v / n * 1e9, 1) for k, v in SPENT.items()},
        "host_calls": dict(CALLS), "calls": calls, "updater": spent,
        "gc_queue_max": GC_QUEUE["max"],
        "gc_queue_mean": round(GC_QUEUE["sum"] / max(1, GC_QUEUE["looks"])), "pool": pool,
    }  # fmt: skip
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
