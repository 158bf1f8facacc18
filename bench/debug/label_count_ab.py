"""The label counter's kernels under block sizes, scratch budgets and a 4-cycle's hub roots
(gpu/label_count.py): one seeded labelled Chung-Lu graph on the device, each (threads,
scratch GiB, hub roots, narrow_max) variant's LabelCounter counting each pattern, best of
--repeat, every count checked equal.

    python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 8 \
        --variants 256:8,256:32,1024:8,1024:32 --patterns lcycle6,lcycle4 \
        [--write-graph g43l.npz | --graph g43l.npz] --out ab.json

A cycle root runs on one block with its count arrays in global memory (12 bytes a vertex of
the pattern's labels); blocks in flight are min(resident, roots, budget / a block's arrays),
so the budget bounds how many warps wait on memory at once, and the block size trades warps
a root against roots in flight. ``--write-graph`` saves the graph (``dcsm gen-graph``'s
format) for the service runs that follow in the same call; ``--graph`` reads such a file
instead of generating, so that several builds can be timed on one graph. ``--phases`` adds
each kernel's summed device time (CUDA events around every launch, last repeat) to a row.
A variant's HUBS caps the hub roots (the budget may take fewer; a row's ``bigs`` are the
4-cycle roots below them that wedge_small passed to wedge_parts) and its NARROW is the
counter's narrow_max: 0 gives every hub 32-bit counters (``512:16:1024:0``: the hubs as
they were before 16-bit counters, up to 1,024 of them).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from static_bench import shape  # noqa: E402

from dcsm.gpu.label_count import HUB_ROOTS, NARROW_MAX, LabelCounter  # noqa: E402
from dcsm.gpu.static_match import StaticMatcher  # noqa: E402
from dcsm.graphio import read_graph, write_graph  # noqa: E402
from dcsm.loadgen.gen_stream import chunglu_graph  # noqa: E402


def _timed(counter: LabelCounter) -> Callable[[], dict[str, float]]:
    """Wrap each of ``counter``'s kernels in a pair of CUDA events on the stream it launches
    on; the function returned restores them and gives each kernel's summed milliseconds."""
    import cupy as cp

    saved, marks = dict(counter._fn), []

    def wrap(name: str, fn: Any) -> Callable[..., None]:
        def run(*args: Any) -> None:
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn(*args)
            end.record()
            marks.append((name, start, end))

        return run

    counter._fn = {name: wrap(name, fn) for name, fn in saved.items()}

    def done() -> dict[str, float]:
        counter._fn = saved
        out: dict[str, float] = {}
        for name, start, end in marks:
            end.synchronize()
            out[name] = out.get(name, 0.0) + cp.cuda.get_elapsed_time(start, end)
        return {name: round(ms, 3) for name, ms in out.items()}

    return done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--labels", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variants", default="256:8,1024:8",
                    help="THREADS:GiB[:HUBS[:NARROW]],... (HUBS: a 4-cycle's most hub "
                         "roots; NARROW: narrow_max, 0 for 32-bit hub counters)")  # fmt: skip
    ap.add_argument("--patterns", default="lcycle6,lcycle4")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--write-graph", type=Path, default=None)
    ap.add_argument("--graph", type=Path, default=None, help="read this graph, do not generate")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--phases", action="store_true",
                    help="each kernel's device time (CUDA events) in the last repeat")  # fmt: skip
    args = ap.parse_args()
    t = time.perf_counter()
    if args.graph:
        g = read_graph(args.graph)
    else:
        g = chunglu_graph(args.edges, labels=args.labels, seed=args.seed)
    print(f"graph: {g.num_edges:,} edges in {time.perf_counter() - t:.1f} s", flush=True)
    if args.write_graph:
        write_graph(args.write_graph, g)
    matcher = StaticMatcher()
    csr = matcher.csr_from_graph(g)
    m = matcher.start_edges(csr)
    rows, want = [], {}
    for spec in args.variants.split(","):
        threads, gib, *rest = (int(x) for x in spec.split(":"))
        hub_roots, narrow_max = (*rest, *(HUB_ROOTS, NARROW_MAX)[len(rest) :])
        counter = LabelCounter(matcher.stream, matcher._host, threads=threads,
                               scratch_max=gib << 30, hub_roots=hub_roots,
                               narrow_max=narrow_max)  # fmt: skip
        for name in args.patterns.split(","):
            p = shape(name)
            best, got = float("inf"), None
            for i in range(args.repeat):
                timed = _timed(counter) if args.phases and i == args.repeat - 1 else None
                t = time.perf_counter()
                got = counter.count(csr, p, 0, m)
                best = min(best, time.perf_counter() - t)
            if want.setdefault(name, got) != got:
                print(f"{name} at {spec}: {got} != {want[name]}", file=sys.stderr)
                return 1
            row = {"pattern": name, "threads": threads, "scratch_gib": gib,
                   "hub_roots": hub_roots, "narrow_max": narrow_max,
                   "hubs_taken": counter.last_hubs, "byte_ranks": counter.last_bytes,
                   "bigs": counter.last_bigs, "count": got,
                   "seconds": round(best, 4)}  # fmt: skip
            if timed is not None:
                row["kernel_ms"] = timed()
            rows.append(row)
            print(json.dumps(row), flush=True)
            args.out.write_text(json.dumps({"edges": g.num_edges, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
