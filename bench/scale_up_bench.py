"""Scale-up: one engine on a LiveJournal-sized graph (issue 17's table).

    python bench/scale_up_bench.py --backend gpu --out bench/results/scale_up/h100.json
    python bench/scale_up_bench.py --backend cpu --edges 200000 --out /tmp/scale_up.json

A seeded Chung-Lu graph of ``--edges`` E edges (LiveJournal's vertex ratio and gamma 2.3 by
default: ``dcsm gen-graph --preset livejournal`` at E = 43M), or ``--graph FILE``. A random
10 % of its edges (``--stream-share``) becomes one insertion stream in random order, the
rest is bulk-loaded. For every pattern (``--patterns``, default the triangle): a fresh
engine loads the initial graph (timed: ``load_s``), registers the pattern in count mode,
and applies the stream in batches of ``--batch-size`` (timed: ``seconds``, the wall time
of the ``apply`` calls). The row is ``exact`` when the positive counts add up to the change
in static embeddings, computed on the host without the engine: a parallel forward
triangle count on degree-ordered adjacency for the triangle (embeddings = 6 x triangles),
the CPU engine's ``count_static`` for other patterns up to ``--static-limit`` edges
(``exact`` is null above it). ``--static-cache FILE`` keeps those counts by graph file,
split and pattern, so that runs taking turns on one graph count them once.

Memory: ``host_rss_peak_load_bytes`` is the process's peak resident set during the load
(the peak is reset just before it where Linux allows: /proc/self/clear_refs), next to
``host_rss_before_load_bytes`` (the graph itself, the workload and the runtime) and
``graph_bytes``, the initial graph's arrays; ``device_used_peak_bytes`` the most device
memory in use (total - free) seen after the load and after every apply call (GPU only);
``pools``, the engine's pools (in use and allocated) after the load and the insertion.
``updater`` (GPU only): the device time the kernel's updater spent during the insertion,
per phase and per step, in seconds, with its batch count; a sum of phases near
``seconds`` means the updater bounds the row, far below it that the host does.
``compiled``: what the timed applies compiled (bench/compile_watch.py): numba's compiles,
not its cache loads, with their seconds, and the kernels CuPy added to its cache. A
process's first 43M insertion on a fresh install is slower than the ones after it, and
this says whether compiling is the difference.

``--churn K`` then deletes the inserted edges and inserts them again, K applies of the
stream in all: each round's time, its count checked against the insertion's (deleting the
edges destroys exactly the matches inserting them created), and the pools after it.

Writes ``{"device": ..., "rows": [...]}`` to ``--out`` after every row; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import njit, prange

from dcsm.engine import device_name, make_engine, warm_up
from dcsm.engine.bulk import fill_lists, intern_graph, lower_counts, sort_edges
from dcsm.engine.cpu import CpuEngine
from dcsm.gpu_options import add_engine_flag
from dcsm.graphio import (
    read_csm_query,
    read_graph,
    write_csm_graph,
    write_csm_query,
    write_csm_stream,
    write_graph,
)
from dcsm.loadgen.gen_stream import PRESETS, chunglu_graph
from dcsm.model import Graph, Pattern, UpdateBatch

sys.path.insert(0, str(Path(__file__).parent))  # bench/ (the script runs with python -P)
from compile_watch import CompileWatch  # noqa: E402
from rapidflow import RapidFlow  # noqa: E402

LJ = PRESETS["livejournal"]
PATTERNS = {
    "triangle": Pattern.build("triangle", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)]),
    "4cycle": Pattern.build(
        "4cycle", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None)]
    ),
}


class Progress:
    """One tqdm-style line on stderr, rewritten in place."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total, self.t0 = what, total, time.perf_counter()

    def update(self, done: int) -> None:
        dt = time.perf_counter() - self.t0
        rate = done / dt if dt > 0 else 0.0
        pct = 100 * done // max(self.total, 1)
        sys.stderr.write(f"\r{self.what}: {done:,}/{self.total:,} [{pct:3d}%] "
                         f"{dt:6.1f}s {rate:,.0f}/s   ")  # fmt: skip
        sys.stderr.flush()

    def close(self) -> None:
        sys.stderr.write("\n")


def note(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- memory ----------------------------------------------------------------------------------


def reset_rss_peak() -> bool:
    """Reset the kernel's peak-RSS mark for this process (Linux >= 4.0); False if not."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _status_bytes(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss_peak_bytes() -> int:
    peak = _status_bytes("VmHWM")
    return peak if peak is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def device_used_bytes() -> int | None:
    try:
        import cupy

        free, total = cupy.cuda.runtime.memGetInfo()
        return int(total - free)
    except Exception:
        return None


class DevicePeak:
    """The most device memory in use (total - free) seen each time ``look`` is called
    (None without a GPU)."""

    def __init__(self) -> None:
        self.bytes = device_used_bytes()

    def look(self) -> None:
        used = device_used_bytes()
        if used is not None:
            self.bytes = max(self.bytes or 0, used)


def graph_bytes(g: Graph) -> int:
    return sum(int(a.nbytes) for a in (g.vertex_ids, g.vertex_labels, g.src, g.dst, g.edge_labels))


# -- exact static counts ---------------------------------------------------------------------


@njit(parallel=True, cache=True)
def _forward_triangles(start, hi, bounds):  # type: ignore[no-untyped-def]
    """Triangles of a graph whose vertices are numbered by degree rank, from its sorted
    edge runs (hi[start[x]:start[x+1]]: x's higher-ranked neighbours, ascending): each
    triangle x < y < z is counted once, at x, as z in both x's and y's runs."""
    part = np.zeros(bounds.shape[0] - 1, np.int64)  # per task: no prange reduction
    for t in prange(bounds.shape[0] - 1):
        sub = 0
        for x in range(bounds[t], bounds[t + 1]):
            xe = start[x + 1]
            for k in range(start[x], xe):
                y = hi[k]
                i = k + 1
                j = start[y]
                ye = start[y + 1]
                while i < xe and j < ye:
                    if hi[i] < hi[j]:
                        i += 1
                    elif hi[i] > hi[j]:
                        j += 1
                    else:
                        sub += 1
                        i += 1
                        j += 1
        part[t] = sub
    return part.sum()


@njit(parallel=True, cache=True)
def _four_cycles(off, low, nbr, bounds):  # type: ignore[no-untyped-def]
    """4-cycles of a graph numbered by degree rank, from full sorted lists (x's list is
    nbr[off[x]:off[x+1]]: its low[x] lower neighbours, then the higher ones). Each cycle
    is counted once, at its highest vertex u and the vertex w opposite: c paths u-v-w
    through lower v and lower w make c (c - 1) / 2 cycles."""
    nv = low.shape[0]
    # Per-task sums, not a prange reduction: numba 0.68 under Python 3.12 fails on that
    # ("unexpected cycle in lookup()").
    part = np.zeros(bounds.shape[0] - 1, np.int64)
    for t in prange(bounds.shape[0] - 1):
        cnt = np.zeros(nv, np.int64)
        touched = np.empty(nv, np.int32)
        sub = 0
        for u in range(bounds[t], bounds[t + 1]):
            nt = 0
            for k in range(off[u], off[u] + low[u]):
                v = nbr[k]
                for r in range(off[v], off[v + 1]):
                    w = nbr[r]
                    if w >= u:
                        break
                    if cnt[w] == 0:
                        touched[nt] = w
                        nt += 1
                    cnt[w] += 1
            for k in range(nt):
                c = cnt[touched[k]]
                sub += c * (c - 1) // 2
                cnt[touched[k]] = 0
        part[t] = sub
    return part.sum()


def ranked(g: Graph) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(start, hi, low, deg) of g renumbered by degree rank (ties by internal id): the
    sorted edge runs and each vertex's count of lower neighbours and degree."""
    ig = intern_graph(g)
    nv = ig.num_vertices
    deg = np.diff(ig.start) + lower_counts(ig.start, ig.hi)
    rank = np.empty(nv, np.int32)
    rank[np.argsort(deg, kind="stable")] = np.arange(nv, dtype=np.int32)
    start, lo, hi, _ = sort_edges(rank[ig.lo], rank[ig.hi], np.zeros(len(ig.lo), np.int32), nv)
    return start, lo, hi, np.sort(deg)


def split_work(work: np.ndarray, parts: int) -> np.ndarray:
    """int64 (parts + 1,) vertex bounds splitting ``work`` (per vertex) about evenly."""
    cum = np.concatenate([[0.0], np.cumsum(work, dtype=np.float64)])
    bounds = np.searchsorted(cum, np.linspace(0, cum[-1], parts + 1)).clip(0, len(work))
    bounds[0], bounds[-1] = 0, len(work)
    return bounds.astype(np.int64)


def count_triangles(g: Graph) -> int:
    """Exact triangle count (subgraphs), parallel forward algorithm: vertices ranked by
    degree so every run is short (O(sqrt E)) even on power-law graphs."""
    start, _, hi, _ = ranked(g)
    run = np.diff(start).astype(np.float64)
    bounds = split_work(run * run + 1, 8 * numba.get_num_threads())
    return int(_forward_triangles(start, hi, bounds))


def count_four_cycles(g: Graph) -> int:
    """Exact 4-cycle count (subgraphs), degree-ordered wedge counting (Chiba-Nishizeki)."""
    start, lo, hi, deg = ranked(g)
    nv = len(deg)
    low = lower_counts(start, hi)
    off = np.zeros(nv + 1, np.int64)
    np.cumsum(deg, out=off[1:])
    nbr = np.empty(int(off[-1]), np.int32)
    fill_lists(start, lo, hi, np.zeros(len(lo), np.int32), low, off[:-1], nbr,
               np.empty(len(nbr), np.int32))  # fmt: skip
    # u's work: the lists of its lower neighbours, i.e. their degrees
    work = np.bincount(hi, weights=deg[lo], minlength=nv) + 1
    return int(_four_cycles(off, low, nbr, split_work(work, 8 * numba.get_num_threads())))


def static_key(args: argparse.Namespace, name: str, pattern: Pattern) -> str:
    """What a row's static counts depend on: the graph (its file's path, size and time, or
    the generator's parameters), the stream's share and seed, and the pattern."""
    if args.graph:
        st = os.stat(args.graph)
        graph = f"{os.path.abspath(args.graph)} {st.st_size} {st.st_mtime_ns}"
    else:
        graph = f"chung-lu E={args.edges} V={args.vertices} gamma={args.gamma} seed={args.seed}"
    return f"{graph} | share={args.stream_share} seed={args.seed} | {name} " + " ".join(
        repr(pattern).split()
    )


def read_static_cache(path: Path | None) -> dict[str, tuple[int, int]]:
    if path is None or not path.exists():
        return {}
    return {k: (int(v[0]), int(v[1])) for k, v in json.loads(path.read_text()).items()}


def write_static_cache(path: Path, key: str, before: int, after: int) -> None:
    counts = read_static_cache(path)
    counts[key] = (before, after)
    path.write_text(json.dumps(counts, indent=1) + "\n")


def static_embeddings(g: Graph, name: str, pattern: Pattern, limit: int) -> int | None:
    if name == "triangle":
        return 6 * count_triangles(g)
    if name == "4cycle":
        return 8 * count_four_cycles(g)
    if g.num_edges > limit:
        return None
    eng = CpuEngine()
    eng.load_graph(g)
    return eng.count_static(pattern)


# -- workload -------------------------------------------------------------------------------


def make_graph(args: argparse.Namespace) -> Graph:
    if args.graph:
        note(f"reading {args.graph}")
        return read_graph(args.graph)
    nv = args.vertices or max(3, round(args.edges * LJ["vertices"] / LJ["edges"]))
    note(f"generating a Chung-Lu graph: {args.edges:,} edges, {nv:,} vertices, gamma {args.gamma}")
    t0 = time.perf_counter()
    g = chunglu_graph(args.edges, nv, gamma=args.gamma, seed=args.seed)
    note(f"  generated in {time.perf_counter() - t0:.1f}s")
    if args.save_graph:
        write_graph(args.save_graph, g)
        note(f"  saved to {args.save_graph}")
    return g


def split(g: Graph, share: float, seed: int) -> tuple[Graph, UpdateBatch]:
    """(initial graph: every vertex, the edges not streamed; the stream: the other edges as
    insertions in random order)."""
    rng = np.random.default_rng(seed + 1)
    n = int(round(g.num_edges * share))
    order = rng.permutation(g.num_edges)
    streamed, kept = order[:n], np.sort(order[n:])
    initial = Graph(g.vertex_ids, g.vertex_labels, g.src[kept], g.dst[kept], g.edge_labels[kept])
    stream = UpdateBatch.from_arrays(
        np.ones(n, np.int8), g.src[streamed], g.dst[streamed], g.edge_labels[streamed]
    )
    return initial, stream


# The engine's defaults: pools sized from the graph and grown as the stream needs
# (gpu/pools.py), vertex tables doubled as the graph needs.
GPU_OPTIONS: dict[str, float] = {"pool_slabs": 0, "max_versions": 0}
SLAB_BYTES = 32 * 16  # the entries of one slab
VERSION_BYTES = 8 * 4


def pool_usage(eng: Any, when: str) -> dict[str, Any] | None:
    """The GPU engine's pools once the collector has caught up: what is in use and what is
    allocated; None for the CPU engine."""
    if not hasattr(eng, "wait_collected"):
        return None
    s = eng.wait_collected()
    return {
        "when": when,
        "slabs_in_use": s["slabs_in_use"], "pool_slabs": s["pool_slabs"],
        "slab_bump": s["slab_bump"], "compactions": s["pool_compactions"],
        "looks": s.get("pool_looks"),  # drains to look at the pools (None: older engines)
        "versions_in_use": s["versions_in_use"], "max_versions": s["max_versions"],
        "used_bytes": s["slabs_in_use"] * SLAB_BYTES + s["versions_in_use"] * VERSION_BYTES,
        "engine_memory_bytes": eng.memory_bytes(),
        "hub_slots": s.get("hub_slots"),  # hub bitmaps the executors share (None: older)
        "hub_carved_slabs": s.get("hub_carved_slabs"),  # the pool's top slabs they take
    }  # fmt: skip


def updater_seconds(eng: Any) -> dict[str, float] | None:
    """The GPU updater's device time so far, in seconds per phase and per step (totals over
    its batches, from ``updater_profile``'s means), with its batch counts; None on the CPU."""
    if not hasattr(eng, "updater_profile"):
        return None
    p = eng.updater_profile()
    out: dict[str, float] = {"batches": p["batches"], "small_batches": p["small_batches"],
                             "merged_levels": p["merged_levels"],
                             "hub_bitmaps": p["hub_bitmaps"]}  # fmt: skip
    for key, mean_us in p.items():
        if not key.endswith("_us") or key.startswith("model_"):
            continue
        times = p["small_batches"] if key.startswith("small_") else p["batches"]
        out[key[: -len("_us")] + "_s"] = mean_us * times / 1e6
    return out


def updater_spent(before: dict[str, float] | None, eng: Any) -> dict[str, float] | None:
    """What the updater spent since ``before`` (``updater_seconds``), rounded."""
    after = updater_seconds(eng)
    if before is None or after is None:
        return None
    return {k: round(v - before.get(k, 0.0), 4) for k, v in after.items()}


def apply_all(
    eng: Any, stream: UpdateBatch, batch_size: int, what: str, peak: DevicePeak
) -> tuple[float, int, int, dict[str, Any]]:
    """Apply ``stream`` in calls of ``batch_size``: (seconds in apply, + count, - count,
    what the calls compiled: :class:`compile_watch.CompileWatch`); ``peak`` looks at the
    device after each call."""
    n = len(stream)
    positive = negative = 0
    seconds = 0.0
    bar = Progress(what, n)
    with CompileWatch() as watch:
        for lo in range(0, n, batch_size):
            part = stream.slice(lo, min(n, lo + batch_size))
            t0 = time.perf_counter()
            res = eng.apply(part)
            seconds += time.perf_counter() - t0
            c = res.counts
            positive += int(c.count[c.sign > 0].sum())
            negative += int(c.count[c.sign < 0].sum())
            peak.look()
            bar.update(min(n, lo + batch_size))
    bar.close()
    if watch.found["numba"] or watch.found["cupy_kernels"]:
        note(f"{what}: compiled {watch.found}")
    return seconds, positive, negative, watch.found


def churn(
    eng: Any, stream: UpdateBatch, rounds: int, batch_size: int, expected: int, name: str,
    peak: DevicePeak,
) -> list[dict[str, Any]]:  # fmt: skip
    """Delete the inserted stream, insert it again, ``rounds`` times in all: each round's
    time, its counts checked against the insertion's, and the pools after it."""
    out = []
    for r in range(rounds):
        op = -1 if r % 2 == 0 else 1
        part = UpdateBatch.from_arrays(np.full(len(stream), op, np.int8), stream.u, stream.v,
                                       stream.label, first_seq=(r + 1) * len(stream))  # fmt: skip
        what = f"{name}: churn {r + 1}/{rounds}"
        before = updater_seconds(eng)
        seconds, positive, negative, compiled = apply_all(eng, part, batch_size, what, peak)
        got = negative if op < 0 else positive
        other = positive if op < 0 else negative
        out.append({
            "round": r + 1, "op": "delete" if op < 0 else "insert", "updates": len(part),
            "seconds": round(seconds, 3),
            "updates_per_s": round(len(part) / seconds) if seconds > 0 else None,
            "count": got, "exact": got == expected and other == 0,
            "updater": updater_spent(before, eng), "compiled": compiled,
            "pools": pool_usage(eng, f"after churn round {r + 1}"),
        })  # fmt: skip
    return out


def run_row(
    args: argparse.Namespace, name: str, pattern: Pattern, initial: Graph, stream: UpdateBatch,
    expected: int | None,
) -> dict[str, Any]:  # fmt: skip
    eng = make_engine(args.backend, gpu_options=GPU_OPTIONS if args.backend == "gpu" else None)
    peak = DevicePeak()
    rss_before = _status_bytes("VmRSS")
    reset = reset_rss_peak()
    note(f"{name}: loading {initial.num_edges:,} edges")
    t0 = time.perf_counter()
    eng.load_graph(initial)
    load_s = time.perf_counter() - t0
    peak.look()
    rss_load = rss_peak_bytes()
    note(f"{name}: loaded in {load_s:.2f}s ({initial.num_edges / load_s / 1e6:.2f} M edges/s), "
         f"peak RSS {rss_load / 2**30:.2f} GiB")  # fmt: skip
    pools = [pool_usage(eng, "after the load")]
    eng.register(0, pattern, from_seq=0, count_only=True)
    n = len(stream)
    before = updater_seconds(eng)
    seconds, positive, negative, compiled = apply_all(
        eng, stream, args.batch_size, f"{name}: inserting", peak)  # fmt: skip
    updater = updater_spent(before, eng)
    pools.append(pool_usage(eng, "after the insertion"))
    exact = None if expected is None else positive == expected and negative == 0
    # Deleting the inserted edges destroys exactly the matches inserting them created.
    churned = churn(eng, stream, args.churn, args.batch_size, positive, name, peak)
    engine_bytes = eng.memory_bytes() if hasattr(eng, "memory_bytes") else None
    eng.close()
    return {
        "pattern": name,
        "edges": initial.num_edges + n,
        "initial_edges": initial.num_edges,
        "vertices": initial.num_vertices,
        "updates": n,
        "load_s": round(load_s, 3),
        "load_edges_per_s": round(initial.num_edges / load_s),
        "seconds": round(seconds, 3),
        "updates_per_s": round(n / seconds) if seconds > 0 else None,
        "exact": exact,
        "updater": updater,
        "compiled": compiled,
        "positive": positive,
        "negative": negative,
        "expected_positive": expected,
        "graph_bytes": graph_bytes(initial),
        "host_rss_before_load_bytes": rss_before,
        "host_rss_peak_load_bytes": rss_load if reset else None,
        "host_rss_peak_bytes": rss_peak_bytes() if reset else None,
        "host_rss_peak_process_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "device_used_peak_bytes": peak.bytes,
        "engine_memory_bytes": engine_bytes,
        "batch_size": args.batch_size,
        "pools": pools if pools[0] else None,
        "churn": churned,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=["cpu", "gpu"], default="gpu")
    ap.add_argument("--edges", type=int, default=LJ["edges"], help="default: LiveJournal's 43M")
    ap.add_argument("--vertices", type=int, help="default: LiveJournal's ratio to the edges")
    ap.add_argument("--gamma", type=float, default=LJ["gamma"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--graph", help="read this graph instead of generating one")
    ap.add_argument("--save-graph", help="write the generated graph here (.npz: binary)")
    ap.add_argument("--stream-share", type=float, default=0.1)
    ap.add_argument("--patterns", default="triangle",
                    help=f"comma-separated: {', '.join(PATTERNS)} or CSM query files")  # fmt: skip
    ap.add_argument("--batch-size", type=int, default=1 << 20, help="updates per apply call")
    ap.add_argument("--churn", type=int, default=0,
                    help="after the insertion, delete the stream and insert it again, this "
                         "many applies of the stream in all (pool usage after each)")  # fmt: skip
    ap.add_argument("--static-limit", type=int, default=200_000,
                    help="largest graph whose static counts of query files are checked "
                         "(by the CPU engine)")  # fmt: skip
    ap.add_argument("--static-cache", type=Path,
                    help="static counts by graph, split and pattern, kept in this JSON "
                         "file for later runs on the same files (A/B runs)")  # fmt: skip
    ap.add_argument("--rapidflow", type=Path, default=os.environ.get("DCSM_RAPIDFLOW") or None,
                    help="RapidFlow.out to run beside every row on the same files "
                         "(default: $DCSM_RAPIDFLOW)")  # fmt: skip
    ap.add_argument(
        "--rapidflow-limit", type=int, default=120,
        help="its time limit a row (s), on its search only: RapidFlow reads and indexes the "
        "graph first (2-3 min at 43M edges)",
    )  # fmt: skip
    add_engine_flag(ap, "batch_cap=16384")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    GPU_OPTIONS.update(args.engine)

    patterns = {}
    for p in args.patterns.split(","):
        patterns[Path(p).stem] = PATTERNS[p] if p in PATTERNS else read_csm_query(p)
    note(f"warming up the {args.backend} engine")
    warm_up(args.backend)
    g = make_graph(args)
    initial, stream = split(g, args.stream_share, args.seed)
    report: dict[str, Any] = {
        "device": device_name(args.backend), "backend": args.backend,
        "host_cpus": os.cpu_count(), "numba_threads": numba.get_num_threads(),
        "graph": args.graph or f"chung-lu E={args.edges} gamma={args.gamma} seed={args.seed}",
        "rows": [],
    }  # fmt: skip
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    peer = PeerFiles(args.rapidflow, args.rapidflow_limit, initial, stream)
    try:
        for name, pattern in patterns.items():
            note(f"{name}: static counts on the host")
            t0 = time.perf_counter()
            key = static_key(args, name, pattern)
            cached = read_static_cache(args.static_cache).get(key)
            if cached is None:
                before = static_embeddings(initial, name, pattern, args.static_limit)
                after = static_embeddings(g, name, pattern, args.static_limit)
                if args.static_cache is not None and before is not None and after is not None:
                    write_static_cache(args.static_cache, key, before, after)
            else:
                before, after = cached
            expected = None if before is None or after is None else after - before
            static_s = time.perf_counter() - t0
            how = "from the cache" if cached is not None else f"{static_s:.1f}s"
            note(f"{name}: {before} -> {after} embeddings ({how})")
            row = run_row(args, name, pattern, initial, stream, expected)
            row["static_embeddings_before"], row["static_embeddings_after"] = before, after
            # Seconds counting; none on a cache hit (its lookup, ~1 ms, is no count).
            row["static_count_s"] = 0.0 if cached is not None else round(static_s, 3)
            row["static_from_cache"] = cached is not None
            row |= peer.fields(name, pattern, row)
            report["rows"].append(row)
            out.write_text(json.dumps(report, indent=2) + "\n")
            note(f"{name}: {row['updates']:,} updates in {row['seconds']:.2f}s "
                 f"({row['updates_per_s']:,}/s), exact={row['exact']}")  # fmt: skip
    finally:
        peer.close()  # its files are as large as the graph
    return 0


class PeerFiles:
    """RapidFlow beside every row: the initial graph and the stream written once as CSM
    files (in a temporary folder), a query file per pattern, and its run's fields for the
    row, with its count checked against ours (an insertion-only stream: the + count)."""

    def __init__(
        self, binary: Path | None, limit: int, initial: Graph, stream: UpdateBatch
    ) -> None:
        self.rf = RapidFlow(binary, limit)
        self.dir = Path(tempfile.mkdtemp(prefix="dcsm-rf-")) if binary else None
        self.any_label: int | None = None
        if self.dir is not None:
            note(f"writing the graph and stream for RapidFlow into {self.dir}")
            write_csm_graph(self.dir / "initial.graph", initial)
            write_csm_stream(self.dir / "insert.stream", stream)
            # CSM files have no wildcard: one that stands for the graph's only label is exact.
            labels = (initial.vertex_labels, initial.edge_labels)
            lo, hi = min(x.min(initial=0) for x in labels), max(x.max(initial=0) for x in labels)
            self.any_label = int(lo) if lo == hi else None

    def fields(self, name: str, pattern: Pattern, row: dict[str, Any]) -> dict[str, Any]:
        if self.dir is None:
            return self.rf.fields(Path(), Path(), Path(), row["positive"])
        query = self.dir / f"{name}.query"
        try:
            write_csm_query(query, pattern, any_label=self.any_label)
        except ValueError as exc:
            return {"rapidflow_failed": str(exc)}
        note(f"{name}: RapidFlow (limit {self.rf.limit} s)")
        out = self.rf.fields(self.dir / "initial.graph", query, self.dir / "insert.stream",
                             row["positive"])  # fmt: skip
        rf = out["rapidflow_same_host_s"]
        out["ratio_to_rapidflow"] = round(rf / row["seconds"], 2) if rf and row["seconds"] else None
        note(f"{name}: RapidFlow {rf} s, timed out: {out['rapidflow_timed_out']}, "
             f"counts equal: {out['rapidflow_counts_equal']}")  # fmt: skip
        return out

    def close(self) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
