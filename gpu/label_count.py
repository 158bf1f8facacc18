"""Counting a tree or a cycle whose vertex labels are fixed and pairwise different on the
device, without enumerating: the GPU side of :mod:`dcsm.engine.tree_count` (dynamic
programming) and :mod:`dcsm.engine.cycle_count` (meeting in the middle), whose docstrings
give the method and whose host code is the oracle; and 4-cycles, diamonds and tailed
triangles of one label, 4-cycles of two labels taking turns (``ring_count.cuh``, after
:mod:`dcsm.engine.short_cycles` and :mod:`dcsm.engine.diamond_count`).

Such patterns are the typed rings and chains of fraud and laundering work (an account, a
card, a merchant, a device), and the ones whose search cannot finish on large graphs: a
6-vertex labelled path over a 43M-edge power-law graph has some 4e14 partial matches.
:class:`StaticMatcher <dcsm.gpu.static_match.StaticMatcher>` counts them here (``dcsm match
--count --backend gpu``, the engine's ``count_static`` and a backfill's slices on
``DeviceSnapshot``) and falls back to its search when a count passes 2^64 - 1 on the way
(over the whole graph only: a slice's matches are those of its roots here, of its start
edges there, so such a slice raises
:func:`dcsm.engine.snapshot.past_64_in_a_slice`'s error instead).

A slice of start edges [t0, t1) counts the roots whose first entry lies in it (data vertices
taking a tree's pattern vertex 0, a cycle's highest-ranked vertex, a diamond's chord's
higher end, a tailed triangle's triangle's lowest-ranked vertex), so slices add up to
the whole graph as the search's do. The kernels (``label_count.cu``, beside this file, with
its layout block) use no CuPy operation that launches a kernel of its own (allocation,
memset and copies only), so they run beside the persistent kernel once loaded, which
:class:`LabelCounter`'s constructor does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.engine.cycle_count import counts_by_labels, ranked_walks
from dcsm.engine.short_cycles import RingShape, ring_shape
from dcsm.engine.tree_count import counts_by_tree, tree_order
from dcsm.model import ANY_LABEL, Pattern

from .loader import kernel_source

SOURCE = Path(__file__).with_name("label_count.cu")
# Threads a block: 512 with the device to itself (the 43M-edge labelled 6-cycle, ranked:
# 0.112 s at 512 against 0.243 at 128, 0.153 at 256 and 0.118 at 1,024,
# bench/results/static/rank-1128/);
# 256 beside the persistent kernel, whose blocks leave 24,576 registers an SM: three blocks
# of 256 threads at 32 registers fit there, one of 512.
THREADS = 512
BESIDE_THREADS = 256
CTL_CLAIM, CTL_TOTAL, CTL_TOTAL_HI, CTL_ERROR = range(4)
ERR_OVERFLOW = 8
# The cycle's per-block count and touched arrays (12 bytes a vertex of the pattern's
# labels) take at most this share of the device's free memory, and at most
# SCRATCH_MAX: fewer blocks, not a failure, on a full device.
SCRATCH_SHARE = 4
# Before ranking, 43M: 8 GiB 238 blocks 3.46 s; 16 GiB 2.52 s. 32 GiB (session 21): the
# 4-cycle's hubs reach HUB_ROOTS at 20M edges and 7,117 at 43M (see HUB_ROOTS).
SCRATCH_MAX = 32 << 30
# A 4-cycle's highest ranks walked by the whole grid (ring_count.cuh's wedge_hubs), each
# with its own count array: as many as the scratch budget holds, at most HUB_ROOTS. The top
# 970 roots of a 20M-edge Chung-Lu graph hold 72 % of its 1.38G wedges, the top 4,000
# 86 %, the top 10,000 91 % (bench/debug/wedge_root_sizes.py). Measured on an H200
# (bench/results/static/hubs16-1128/): 16 GiB hold 3,860 hubs of 16-bit counters there,
# and its 4-cycle took 0.162 s, against 0.209 s with 970 hubs of 32-bit counters; 32 GiB
# (7,725 hubs) 0.151 s. At 43M edges, 1,784 hubs: 0.511 against 0.587 s. With the ranks
# below the hubs in shared-memory tables (bench/results/static/session20/): 0.072-0.075 s
# at 20M edges, and fewer hubs are slower there (2,000: 0.088 s; 1,000: 0.151 s). With byte
# counters (bench/results/static/session21/), 16 GiB hold 7,677 hubs at 20M edges (0.049
# s; 8 GiB's 3,831: 0.048 s) and 3,539 at 43M (0.170 s). Past a point, more hubs cost
# more in memset and walk than they save at 20M (16,384 roots in 32 GiB: 15,369 hubs,
# 0.056 s), while at 43M they still save wedge_parts' many parts. 8,192 roots in 32 GiB
# suit both: 0.0499 s at 20M (8,192 hubs) and 0.1324 s at 43M (7,117 hubs).
HUB_ROOTS = 8192
# u a warp's item in wedge_hubs (ring_count.cuh; passed to it as HUB_CHUNK): fewer is
# faster there, as the phase waits on its longest items (20M Chung-Lu, H200: 43.0 ms at 2,
# 55.9 at 8, 80.8 at 32, bench/results/static/session20/), and a hub's u row parts longer
# than HUB_LONG go to hub_rows in segments. The host sizes hub_rows' queue by it.
HUB_CHUNK = 2
# A hub root with at most this many u counts in narrow counters (ring_count.cuh's
# NARROW_MAX: a count is at most the root's u count): bytes for the w whose rows bound
# their counts below 2^8 (byte_ranks), 16-bit counters for the others; 0: every hub in
# 32-bit ones.
NARROW_MAX = 0xFFFF
_MAX_GRID = 1 << 16
SCAN_TILE = 1 << 14  # entries a block scans (_scan)
INT32_MAX = 2**31 - 1


@functools.cache
def load_module(  # type: ignore[no-untyped-def]
    min_blocks: int = 0, threads: int = THREADS, defines: tuple[str, ...] = ()
):
    """The compiled module (CuPy caches it by source text and options) for blocks of
    ``threads``; ``min_blocks`` caps the counting kernels' registers as
    ``StaticMatcher(count_min_blocks=)`` does its own; ``defines`` (tests) set
    ring_count.cuh's knobs, e.g. ``-DSMALL_LIMIT=2`` (the w a 4-cycle's warp table takes),
    ``-DHUB_LONG=4`` (the hub row parts walked in place)."""
    import cupy as cp

    caps = (f"-DLC_MIN_BLOCKS={min_blocks}",) if min_blocks else ()
    options = ("-std=c++17", "--device-int128", f"-DTHREADS={threads}",
               f"-DHUB_CHUNK={HUB_CHUNK}", *caps, *defines)  # fmt: skip
    return cp.RawModule(code=kernel_source(SOURCE), options=options)


# The rings counted here (ring_count.cuh); the search counts triangles faster (20M-edge
# Chung-Lu graph: 7.2 against 86 ms, bench/results/static/rings-1128/).
DEVICE_RINGS = ("cycle4", "diamond", "tailed")


def device_ring(pattern: Pattern) -> RingShape | None:
    """``pattern``'s :func:`~dcsm.engine.short_cycles.ring_shape` if it is one counted here (a
    4-cycle, a diamond or a tailed triangle of one label, a 4-cycle of two labels taking
    turns), else None."""
    shape = ring_shape(pattern)
    return shape if shape is not None and shape.kind in DEVICE_RINGS else None


def counts_on_device(pattern: Pattern) -> bool:
    """Whether :meth:`LabelCounter.count` counts ``pattern``: a tree or a cycle whose vertex
    labels are fixed and all different, or a :func:`device_ring`."""
    return counts_by_labels(pattern) or device_ring(pattern) is not None


class LabelCounter:
    """Counts label-injective trees and cycles on one CUDA stream (a static matcher's).

    Args:
        stream: the CuPy stream of every launch and copy.
        host: copies a device array to the host once the stream has done everything before
            (the matcher's, which may wait on an event instead of blocking in the driver).
        min_blocks: the counting kernels' minimum of blocks an SM (0: ptxas' own).
        threads: threads a block (a multiple of 32, at most 1,024).
        scratch_max: most bytes of a phase's scratch arrays: the cycle's per-block arrays,
            the 4-cycle's hub arrays (see SCRATCH_SHARE).
        hub_roots: the most top ranks of a 4-cycle walked by the whole grid (HUB_ROOTS).
        defines: see :func:`load_module` (tests: small tables and short long rows).
        narrow_max: the most u of a hub root counted in narrow counters, bytes and 16-bit
            ones (NARROW_MAX; 0: 32-bit counters for every hub, as before them, for an A/B).
    """

    def __init__(
        self,
        stream: Any,
        host: Callable[[Any], np.ndarray],
        min_blocks: int = 0,
        *,
        threads: int = THREADS,
        scratch_max: int = SCRATCH_MAX,
        hub_roots: int = HUB_ROOTS,
        narrow_max: int = NARROW_MAX,
        defines: tuple[str, ...] = (),
    ) -> None:
        import cupy as cp

        if threads % 32 or not 32 <= threads <= 1024:
            raise ValueError(f"threads must be a multiple of 32 in [32, 1024], got {threads}")
        if not 0 <= narrow_max <= NARROW_MAX:
            raise ValueError(f"narrow_max must be in [0, {NARROW_MAX}], got {narrow_max}")
        self._cp, self.stream, self._host = cp, stream, host
        self.threads, self.scratch_max, self.hub_roots = threads, scratch_max, hub_roots
        self.narrow_max = narrow_max
        self.last_hubs = 0  # the hub roots the last count took (benchmarks read it)
        self.last_bytes = 0  # the ranks below which its hubs counted in bytes (tests)
        self._wctl: Any = None  # the last 4-cycle count's wedge_small / wedge_parts claims
        mod = load_module(min_blocks, threads, defines)
        names = ("lower_bounds_i32", "lower_bounds_i64", "fill_ones", "tree_absorb",
                 "sum_range", "label_ranks", "step_degrees", "scan_inclusive",
                 "scan_tiles", "scan_add", "step_fill", "cycle_roots", "diamond_pairs",
                 "tailed_pairs", "diamond_triangles", "edge_pairs", "byte_ranks", "hub_items",
                 "wedge_hubs", "hub_rows", "wedge_small", "wedge_parts")  # fmt: skip
        self._fn = {name: mod.get_function(name) for name in names}
        sms = int(cp.cuda.Device().attributes["MultiProcessorCount"])
        regs = {name: max(1, int(fn.num_regs)) for name, fn in self._fn.items()}
        self._resident = {
            name: sms * max(1, min(65536 // (r * threads), 2048 // threads))
            for name, r in regs.items()
        }

    def count(self, csr: Any, pattern: Pattern, t0: int, t1: int) -> int | None:
        """The matches of ``pattern`` (:func:`counts_on_device` must hold) in ``csr`` (a
        ``DeviceCsr``) whose root (a tree's pattern vertex 0, a cycle's or a 4-cycle's
        highest-ranked vertex, a diamond's chord's higher end, a tailed triangle's
        triangle's lowest-ranked vertex) sits at a vertex whose first
        entry lies in the start edges [t0, t1), or None when a count passed 2^64 - 1 on the
        way (the caller then searches). Waits for the stream."""
        cp = self._cp
        self.last_hubs, self.last_bytes, self._wctl = 0, 0, None
        shape = device_ring(pattern)
        labels = list(shape.labels) if shape else [int(x) for x in pattern.vlabels]
        with self.stream:
            # label runs in the snapshot's ids, and the roots of [t0, t1)
            keys = np.array([*labels, *(x + 1 for x in labels), t0, t1], np.int64)
            d_keys = cp.asarray(keys)
            found = cp.empty(len(keys), np.int64)
            n = 2 * len(labels)
            self._fn["lower_bounds_i32"](
                (1,), (max(32, n),), (csr.vlab, np.int64(csr.nv), d_keys, np.int32(n), found)
            )
            self._fn["lower_bounds_i64"](
                (1,), (32,), (csr.off, np.int64(csr.nv), d_keys[n:], np.int32(2), found[n:])
            )
        bounds = self._host(found)
        runs = {lab: (int(bounds[i]), int(bounds[len(labels) + i])) for i, lab in
                enumerate(labels)}  # fmt: skip
        for lab in labels:
            if lab == INT32_MAX:  # no label above it: its run ends with the vertices
                runs[lab] = (runs[lab][0], csr.nv)
            elif lab == ANY_LABEL:  # a ring of any label: every vertex
                runs[lab] = (0, csr.nv)
        x0, x1 = int(bounds[n]), int(bounds[n + 1])
        if shape is not None:
            with self.stream:
                ctl = self._ctl()
                if not self._ring(csr, shape, runs, x0, x1, ctl):
                    return 0
            total = self._total(ctl)
            return None if total is None else total * shape.scale
        if not counts_by_tree(pattern):
            with self.stream:
                ctl = self._ctl()
                if not self._cycle(csr, pattern, runs, x0, x1, ctl):
                    return 0
            return self._total(ctl)
        lo0, hi0 = runs[labels[0]]  # a tree's root: pattern vertex 0
        x0, x1 = max(lo0, x0), min(hi0, x1)
        if x0 >= x1:
            return 0
        with self.stream:
            ctl = self._ctl()
            self._tree(csr, pattern, runs, x0, x1, ctl)
        return self._total(ctl)

    @property
    def last_bigs(self) -> int:
        """The roots the last 4-cycle count passed from wedge_small to wedge_parts (tests
        and benchmarks; waits for the stream)."""
        return 0 if self._wctl is None else int(self._host(self._wctl[1:2])[0])

    def _ctl(self) -> Any:
        ctl = self._cp.empty(4, np.uint64)
        ctl.data.memset_async(0, ctl.nbytes, self.stream)
        return ctl

    def _total(self, ctl: Any) -> int | None:
        """ctl's 128-bit total once the stream is done, or None past 2^64 - 1 on the way."""
        got = self._host(ctl)
        if int(got[CTL_ERROR]) & ERR_OVERFLOW:
            return None
        return int(got[CTL_TOTAL]) | int(got[CTL_TOTAL_HI]) << 64

    def _grid(self, name: str, warps: int) -> tuple[int]:
        return (max(1, min(self._resident[name], _MAX_GRID, -(-warps // (self.threads // 32)))),)

    def _tree(
        self, csr: Any, pattern: Pattern, runs: dict[int, tuple[int, int]], x0: int, x1: int,
        ctl: Any,
    ) -> None:  # fmt: skip
        """Every vertex's message (fill_ones, then tree_absorb an edge, children first),
        then the root's over [x0, x1) added into ctl (sum_range)."""
        cp = self._cp
        labels = [int(x) for x in pattern.vlabels]
        sizes = [runs[lab][1] - runs[lab][0] for lab in labels]
        base = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        msg = cp.empty(max(1, base[-1]), np.uint64)
        self._fn["fill_ones"](self._grid("fill_ones", base[-1] // 32 + 1), (self.threads,),
                              (msg, np.int64(base[-1])))  # fmt: skip

        def part(v: int) -> Any:
            return msg[base[v] : base[v] + sizes[v]]

        for v, parent, lab in reversed(tree_order(pattern)[1:]):  # children before parents
            p_lo, p_hi = runs[labels[parent]]
            c_lo, c_hi = runs[labels[v]]
            if p_lo == p_hi:
                continue
            self._fn["tree_absorb"](
                self._grid("tree_absorb", p_hi - p_lo), (self.threads,),
                (csr.off, csr.nbr, csr.elab, np.int32(p_lo), np.int32(p_hi), np.int32(c_lo),
                 np.int32(c_hi), np.int32(lab), part(v), part(parent), ctl),
            )  # fmt: skip
        lo0 = runs[labels[0]][0]
        self._fn["sum_range"](
            self._grid("sum_range", (x1 - x0) // 32 + 1), (self.threads,),
            (part(0), np.int64(x0 - lo0), np.int64(x1 - lo0), ctl),
        )  # fmt: skip

    def _scan(self, a: Any) -> None:
        """a (int64) = its inclusive prefix sums: one block over a tile of SCAN_TILE
        entries each, then over the tiles' totals (a single block over the 7.2M row
        offsets of the 43M-edge labelled 6-cycle took 10.7 of its 112 ms)."""
        n = int(a.size)
        tiles = -(-n // SCAN_TILE)
        if tiles <= 1:
            self._fn["scan_inclusive"]((1,), (self.threads,), (a, np.int64(n)))
            return
        sums = self._cp.empty(tiles, np.int64)
        args = (a, np.int64(n), np.int64(SCAN_TILE))
        self._fn["scan_tiles"]((tiles,), (self.threads,), (*args, sums))
        self._fn["scan_inclusive"]((1,), (self.threads,), (sums, np.int64(tiles)))
        self._fn["scan_add"]((tiles,), (self.threads,), (*args, sums))

    def _ranked_rows(
        self, csr: Any, labels: list[int], steps: list[tuple[int, int, int]],
        runs: dict[int, tuple[int, int]], *, own_rows: bool = False,
    ) -> tuple[Any, ...] | None:  # fmt: skip
        """The ranks of the vertices of ``labels`` (label_ranks), taken as compact indices in
        the order of ``labels``, and the rows of ``steps`` (source label, destination label,
        edge label), each over its source label's whole run, entries as ranks
        (step_degrees, a scan, step_fill): (d_runs, pos_of, roff, rnbr, step_table (each
        step's first row slot and its source run's first compact position), compact); None,
        with nothing launched, when a label has no vertex (no match). ``own_rows``: the one
        step's rows are the snapshot's own (one label over every vertex, every edge fitting:
        ranks are ids), so none are built."""
        cp = self._cp
        k = len(labels)
        if any(runs[lab][0] == runs[lab][1] for lab in labels):
            return None
        base, compact = {}, 0
        for lab in labels:
            base[lab] = compact
            compact += runs[lab][1] - runs[lab][0]
        run_table = np.array([*((runs[lab][0], base[lab]) for lab in labels), (csr.nv, compact)],
                             np.int64)  # fmt: skip
        d_runs = cp.asarray(run_table.ravel())
        crank, pos_of = cp.empty(compact, np.int32), cp.empty(compact, np.int32)
        self._fn["label_ranks"](self._grid("label_ranks", compact // 32 + 1), (self.threads,),
                                (csr.off, d_runs, np.int32(k), crank, pos_of))  # fmt: skip
        if own_rows:
            return d_runs, pos_of, csr.off, csr.nbr, cp.zeros(2, np.int64), compact
        sizes = [runs[src][1] - runs[src][0] for src, _, _ in steps]
        row_base = np.concatenate([[0], np.cumsum([n + 1 for n in sizes])])
        roff = self._zeros(int(row_base[-1]), np.int64)
        for (src, dst, lab), n, rb in zip(steps, sizes, row_base[:-1], strict=True):
            d_lo, d_hi = runs[dst]
            self._fn["step_degrees"](
                self._grid("step_degrees", n), (self.threads,),
                (csr.off, csr.nbr, csr.elab, np.int32(runs[src][0]), np.int32(n),
                 np.int32(d_lo), np.int32(d_hi), np.int32(lab), roff[int(rb) + 1 :]),
            )  # fmt: skip
        self._scan(roff)
        rnbr = cp.empty(max(1, int(self._host(roff[-1:])[0])), np.int32)
        for (src, dst, lab), n, rb in zip(steps, sizes, row_base[:-1], strict=True):
            d_lo, d_hi = runs[dst]
            self._fn["step_fill"](
                self._grid("step_fill", n), (self.threads,),
                (csr.off, csr.nbr, csr.elab, np.int32(runs[src][0]), np.int32(n),
                 np.int32(d_lo), np.int32(d_hi), np.int32(lab), crank[base[dst] :],
                 roff[int(rb) :], rnbr),
            )  # fmt: skip
        step_table = np.array([(rb, base[src]) for (src, _, _), rb in
                               zip(steps, row_base[:-1], strict=True)], np.int64)  # fmt: skip
        return d_runs, pos_of, roff, rnbr, cp.asarray(step_table.ravel()), compact

    def _zeros(self, n: int, dtype: Any) -> Any:
        """n zeros on the stream (a memset: no kernel of CuPy's own)."""
        a = self._cp.empty(n, dtype)
        a.data.memset_async(0, a.nbytes, self.stream)
        return a

    def _budget(self) -> int:
        """Bytes the counting's scratch arrays may take: SCRATCH_SHARE of the free memory,
        at most scratch_max."""
        cp = self._cp
        free, _ = cp.cuda.runtime.memGetInfo()
        free += cp.get_default_memory_pool().free_bytes()
        return min(self.scratch_max, free // SCRATCH_SHARE)

    def _hubs(self, ends: np.ndarray) -> int:
        """The most top ranks whose hub count arrays fit the budget: ends[h] (ascending,
        ends[0] = 0) is the 32-bit word where hub h's array ends."""
        return int(np.searchsorted(ends, self._budget() // 4, side="right")) - 1

    def _root_blocks(self, name: str, compact: int, per_vertex: int) -> int:
        """Blocks of ``name`` (cycle_roots), each with scratch arrays of
        ``per_vertex`` bytes a compact vertex, within SCRATCH_SHARE of the free memory and
        scratch_max."""
        budget = self._budget()
        return max(1, min(self._resident[name], compact, budget // (per_vertex * compact)))

    def _cycle(
        self, csr: Any, pattern: Pattern, runs: dict[int, tuple[int, int]], x0: int, x1: int,
        ctl: Any,
    ) -> bool:  # fmt: skip
        """cycle_roots over the roots with ids in [x0, x1): the :meth:`_ranked_rows` of
        :func:`~dcsm.engine.cycle_count.ranked_walks`' start labels and distinct steps, and
        the walks' steps. False, with nothing launched, when a label has no vertex."""
        cp = self._cp
        labels, steps, walks = ranked_walks(pattern)
        k = len(labels)
        built = self._ranked_rows(csr, labels, steps, runs)
        if built is None:
            return False
        d_runs, pos_of, roff, rnbr, d_steps, compact = built
        d_walks = cp.asarray(walks.ravel())
        blocks = self._root_blocks("cycle_roots", compact, 12)
        cnt = self._zeros(blocks * compact, np.uint64)
        touched = cp.empty(blocks * compact, np.int32)
        self._fn["cycle_roots"](
            (blocks,), (self.threads,),
            (roff, rnbr, pos_of, d_runs, d_steps, np.int32(len(steps)), d_walks, np.int32(k),
             np.int32(k // 2), np.int32(x0), np.int32(x1), cnt, touched, ctl),
        )  # fmt: skip
        return True

    def _ring(
        self, csr: Any, shape: RingShape, runs: dict[int, tuple[int, int]], x0: int, x1: int,
        ctl: Any,
    ) -> bool:  # fmt: skip
        """The subgraphs of ``shape`` rooted at ids in [x0, x1) into ctl's total: the
        :meth:`_ranked_rows` of its labels, one step from each to the next (the snapshot's
        own rows where those are the step's), then :meth:`_four_cycles`,
        :meth:`_diamonds_by_triangles` (the whole graph's diamonds), diamond_pairs (a
        slice's) or tailed_pairs. False, with nothing launched, when a label has no vertex."""
        labels = list(shape.labels)
        k = len(labels)
        steps = [(labels[j], labels[(j + 1) % k], shape.edge_label) for j in range(k)]
        own = (k == 1 and runs[labels[0]] == (0, csr.nv)
               and shape.edge_label in (ANY_LABEL, csr.elab_one))  # fmt: skip
        built = self._ranked_rows(csr, labels, steps, runs, own_rows=own)
        if built is None:
            return False
        d_runs, pos_of, roff, rnbr, d_steps, compact = built
        if shape.kind == "cycle4":
            rows = (roff, rnbr, pos_of, d_runs, np.int32(k), d_steps)
            self._four_cycles(rows, (np.int32(x0), np.int32(x1)), compact, ctl)
            return True
        lo, hi = runs[labels[0]]  # one label: a rank is its place in the run
        r0, r1 = max(x0, lo) - lo, min(x1, hi) - lo
        if r0 >= r1:
            return True
        if shape.kind == "diamond" and (r0, r1) == (0, hi - lo):  # the whole graph
            self._diamonds_by_triangles(roff, rnbr, r1, ctl)
            return True
        kernel = "tailed_pairs" if shape.kind == "tailed" else "diamond_pairs"
        self._fn[kernel]((self._resident[kernel],), (self.threads,),
                         (roff, rnbr, np.int32(r0), np.int32(r1), ctl))  # fmt: skip
        return True

    def _diamonds_by_triangles(self, roff: Any, rnbr: Any, ranks: int, ctl: Any) -> None:
        """The diamonds of the whole graph (rows [0, ranks)) into ctl's total: each edge's
        triangles counted into its counter (diamond_triangles), then C(t, 2) summed over
        the counters (edge_pairs). A slice's diamonds are diamond_pairs' (a chord's
        triangles lie anywhere, so a slice of triangles would not give them)."""
        n = int(rnbr.size)
        tcnt = self._zeros(n, np.uint32)
        self._fn["diamond_triangles"]((self._resident["diamond_triangles"],), (self.threads,),
                                      (roff, rnbr, np.int32(0), np.int32(ranks), tcnt))  # fmt: skip
        self._fn["edge_pairs"](self._grid("edge_pairs", n // 32 + 1), (self.threads,),
                               (tcnt, np.int64(n), ctl))  # fmt: skip

    def _four_cycles(
        self, rows: tuple[Any, ...], cut: tuple[Any, Any], compact: int, ctl: Any
    ) -> None:
        """A 4-cycle's roots with ids in ``cut`` (x0, x1) into ctl's total (``rows``: the
        4-cycle kernels' first arguments, roff to steps): wedge_hubs over the top ranks
        (:meth:`_hub_phase`, whose arrays take up to the budget and are released before
        the rest), then wedge_small over the rest, a warp a root with its counts in shared
        memory, and wedge_parts over the roots whose w its tables could not hold (bigs), a
        block a root, part by part."""
        top = compact - self._hub_phase(rows, cut, compact, ctl)
        if top <= 0:
            return
        wctl = self._wctl = self._zeros(3, np.uint64)  # ring_count.cuh's WCTL_*
        bigs = self._cp.empty(top, np.int32)
        self._fn["wedge_small"]((self._resident["wedge_small"],), (self.threads,),
                                (*rows, *cut, np.int32(top), bigs, wctl, ctl))  # fmt: skip
        self._fn["wedge_parts"]((self._resident["wedge_parts"],), (self.threads,),
                                (*rows, bigs, wctl, ctl))  # fmt: skip

    def _hub_phase(
        self, rows: tuple[Any, ...], cut: tuple[Any, Any], compact: int, ctl: Any
    ) -> int:
        """wedge_hubs over the most top ranks, at most hub_roots, whose count arrays fit the
        budget; returns how many it took. byte_ranks finds the ranks whose counters fit a
        byte, hub_items gives each candidate its items and its array's words (compact for
        32-bit counters, fewer for narrow ones, none for a root without a 4-cycle), scans
        make them offsets, and the host reads the byte ranks, where each hub's array ends
        and the hubs' items (three waits on the stream); then hub_rows walks the long rows
        wedge_hubs queued, a segment a warp."""
        most = min(self.hub_roots, compact)
        if most <= 0:
            return 0
        far = self._zeros(1, np.uint64)
        self._fn["byte_ranks"](self._grid("byte_ranks", compact // 32 + 1), (self.threads,),
                               (rows[0], *rows[2:], far))  # fmt: skip
        self.last_bytes = bytes_ = compact - int(self._host(far)[0])
        items, slots = self._zeros(most + 1, np.int64), self._zeros(most + 1, np.int64)
        self._fn["hub_items"](self._grid("hub_items", most // 32 + 1), (self.threads,),
                              (*rows, *cut, np.int32(most), np.int32(self.narrow_max),
                               np.int64(bytes_), items, slots))  # fmt: skip
        self._scan(items)
        self._scan(slots)
        ends = self._host(slots)
        hubs = self._hubs(ends)
        if ends[hubs] > 0:
            cp = self._cp
            hub_cnt = self._zeros(int(ends[hubs]), np.uint32)
            claim = self._zeros(2, np.uint64)  # wedge_hubs' items, hub_rows' segments
            cap = int(self._host(items[hubs : hubs + 1])[0]) * HUB_CHUNK  # the hubs' u at most
            queue = (cp.empty(cap, np.int32), cp.empty(cap, np.int64), cp.empty(cap, np.int64),
                     self._zeros(cap + 1, np.int64), self._zeros(1, np.uint64))  # fmt: skip
            args = (*rows, np.int32(hubs), np.int64(bytes_), items, slots, hub_cnt, claim[:1],
                    *queue, ctl)  # fmt: skip
            self._fn["wedge_hubs"]((self._resident["wedge_hubs"],), (self.threads,), args)
            self._scan(queue[3])
            self._fn["hub_rows"]((self._resident["hub_rows"],), (self.threads,),
                                 (rows[1], np.int64(compact), np.int64(bytes_), slots, hub_cnt,
                                  *queue, claim[1:], ctl))  # fmt: skip
        self.last_hubs = hubs
        return hubs
