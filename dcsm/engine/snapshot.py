"""A frozen graph that static matching runs on away from the engine: what a backfill runs
on beside the stream (``dcsm.service.backfill``).

The CPU kernels release the GIL, so slices of root vertices (:meth:`StaticSnapshot.run` over
``[lo, hi)``) run on other cores while the engine thread goes on applying updates, and
:meth:`StaticSnapshot.run_all` (the engine's ``count_static`` and ``match_static``) runs
slices on every core. The
search breaks the pattern's symmetry (:func:`~dcsm.engine.plan.static_plan`): it finds one
embedding of each orbit under the pattern's automorphisms, from exactly one root, and the
rows give each one followed by its images. So the slices' counts add up and their matches,
concatenated in slice order, are the engine's own ``match_static`` rows in its order.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from ..errors import EngineError
from ..model import Graph, Pattern
from . import cpu_kernels as kern
from .bulk import intern_graph
from .cycle_count import counts_by_cycle, cycle_counts, cycle_rows
from .diamond_count import diamond_counts, diamond_rows
from .plan import GraphShape, stack_plans, static_plan
from .short_cycles import ring_shape, short_cycle_counts, short_cycle_rows
from .tree_count import checked_sum, root_counts, root_counts_exact, tree_plan

WEDGES = 2000  # wedges sampled for GraphShape.closure (seeded: the same graph, the same plan)
SLICES_PER_THREAD = 8  # run_all: slices of equal degree sums, so that hubs spread out
PARALLEL_ENTRIES = 1 << 16  # run_all: a graph of fewer adjacency entries runs on one thread


def counts_without_search(pattern: Pattern) -> bool:
    """Whether a count of ``pattern`` adds up per-root counts instead of searching: a tree
    :func:`~dcsm.engine.tree_count.tree_plan` plans, a cycle whose vertex labels are fixed
    and all different, or a ring :func:`~dcsm.engine.short_cycles.ring_shape` names (a
    triangle, 4-cycle, tailed triangle or diamond of one label, a 4-cycle of two labels
    taking turns)."""
    return (
        tree_plan(pattern) is not None
        or counts_by_cycle(pattern)
        or ring_shape(pattern) is not None
    )


def _usable_cores() -> int:
    """The cores this process may run on (all of them where the OS cannot say)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


def _label_counts(vlab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The labels present and how many vertices carry each (a count table when the labels
    are small, as they mostly are, else a sort)."""
    if len(vlab) and 0 <= vlab.min() and vlab.max() < 1 << 16:
        counts = np.bincount(vlab)
        labels = np.nonzero(counts)[0]
        return labels, counts[labels]
    return np.unique(vlab, return_counts=True)


def past_64_in_a_slice(pattern: Pattern) -> str:
    """The error of a slice whose count passed 2^64 - 1 at one vertex: the search would
    count it, but its slices hold other matches than the counting's (its roots are another
    pattern vertex's, or start edges), so only a whole-graph count may fall back to it."""
    return (
        f"pattern {pattern.name!r}: a count passed 2^64 - 1 at one vertex while counting a "
        "slice of the graph without a search; count it over the whole graph (dcsm match, "
        "or a registration whose backfill runs inline) instead"
    )


class MatchSnapshot(Protocol):
    """What a backfill beside the stream runs on (``dcsm.service.backfill``): a frozen graph
    cut into slices of start points whose matches add up. :class:`StaticSnapshot` (host,
    roots are vertices) and the GPU engine's ``DeviceSnapshot`` (device, roots are start
    edges) are the two."""

    def slices(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """At most ``k`` slices: (cut points from 0 to the end, int64; the work before each
        cut, so that a slice's share of the work is a difference)."""
        ...

    def run(
        self, pattern: Pattern, lo: int, hi: int, emit: bool, limit: int | None = None
    ) -> tuple[int, np.ndarray]:
        """The matches found from the slice ``[lo, hi)``: (count, int64 (k, n) external ids
        if ``emit`` (at most ``limit`` rows; the count stays exact), else an empty array)."""
        ...


@dataclass(frozen=True)
class StaticSnapshot:
    """The kernels' graph arrays ``(off, deg, nbr, elab, vlab, ext)``: the engine's own for
    a run that finishes before the next update; from
    :meth:`~dcsm.engine.cpu.CpuEngine.static_snapshot`, copies of ``off`` and ``deg`` over
    the engine's pool, whose lists the engine moves before changing them (copy on write);
    from :meth:`from_graph`, arrays of their own."""

    arrays: tuple[np.ndarray, ...]
    num_vertices: int
    # id(pattern) -> (pattern, what counting it without enumerating needs: a tree's root
    # counts, a cycle's step rows), built once for every slice
    _counting: dict[int, tuple[Pattern, Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _counting_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    @staticmethod
    def from_graph(graph: Graph) -> StaticSnapshot:
        """The snapshot of any engine's exported graph (one without snapshots of its own,
        to match it on the host beside the stream), built as the CPU engine bulk-loads
        one."""
        g = intern_graph(graph)
        off, deg, _, nbr, elab, tail = kern.bulk_load(g)
        return StaticSnapshot((off, deg, nbr[:tail], elab[:tail], g.vlab, g.ext), g.num_vertices)

    @cached_property
    def shape(self) -> GraphShape:
        """The graph's degree spread, closure and label shares (computed once, so that every
        slice of a backfill runs the same plan)."""
        off, deg, nbr, _, vlab, _ = self.arrays
        d = deg[: self.num_vertices].astype(np.float64)
        total = d.sum()
        labels, counts = _label_counts(vlab[: self.num_vertices])
        share = dict(zip(labels.tolist(), (counts / max(1, self.num_vertices)).tolist(),
                         strict=True))  # fmt: skip
        excess = float((d * d).sum() / total) if total else 0.0
        wedges = d * (d - 1)
        if not wedges.sum():
            return GraphShape(excess, 0.0, share)
        rng = np.random.default_rng(0)
        centre = np.searchsorted(np.cumsum(wedges), rng.random(WEDGES) * wedges.sum(), "right")
        centre = np.minimum(centre, len(d) - 1)
        i = rng.integers(0, deg[centre])
        j = rng.integers(0, deg[centre] - 1)
        j += j >= i  # two distinct neighbours of the centre
        a, b = nbr[off[centre] + i], nbr[off[centre] + j]
        closed = kern.closed_wedges(off, deg, nbr, a, b)
        return GraphShape(excess, closed / WEDGES, share)

    @cached_property
    def _widest(self) -> int:
        """The largest degree: a candidate list holds at most the neighbours of one
        already-matched vertex (computed once, not once per slice)."""
        return int(self.arrays[1].max(initial=0))

    @cached_property
    def _plan_memo(self) -> dict[int, tuple[Pattern, tuple[np.ndarray, ...]]]:
        return {}  # id(pattern) -> (pattern, its plan arrays)

    def _plans(self, pattern: Pattern) -> tuple[np.ndarray, ...]:
        """The kernels' plan arrays for ``pattern``, built once per snapshot (every slice
        runs the same plan; a pattern with many automorphisms takes milliseconds to plan).
        The search runs with symmetry broken; each match it finds is written with the
        others it stands for right after it (plan.static_plan)."""
        memo = self._plan_memo.get(id(pattern))
        if memo is None:  # the pattern is kept with its plan, so its id stays its own
            memo = pattern, kern.plan_arrays(stack_plans([static_plan(pattern, self.shape)]))
            self._plan_memo[id(pattern)] = memo
        return memo[1]

    def _counting_for(self, pattern: Pattern, build: Callable[[], Any]) -> Any:
        """``build()`` for ``pattern``, built once per snapshot (a backfill's slices on
        several threads wait for the first)."""
        with self._counting_lock:
            if id(pattern) not in self._counting:  # kept with the pattern: its id stays its own
                self._counting[id(pattern)] = pattern, build()
            return self._counting[id(pattern)][1]

    def _counted(self, pattern: Pattern, lo: int, hi: int) -> np.ndarray | None:
        """The matches with its root at each of the vertices [lo, hi), of a pattern that
        :func:`counts_without_search` takes (a tree's root is its plan's, a cycle's its
        highest-ranked vertex: the same for every slice), or None where a cycle's count
        passes 64 bits at a vertex (a tree's is then taken in Python integers)."""
        nv = self.num_vertices
        if tree_plan(pattern) is not None:  # past 2^64 at a vertex: in Python integers

            def counted() -> np.ndarray:
                counts = root_counts(self.arrays, nv, pattern)
                return root_counts_exact(self.arrays, nv, pattern) if counts is None else counts

            return self._counting_for(pattern, counted)[lo:hi]
        shape = ring_shape(pattern)
        if shape is not None and shape.kind == "diamond":
            rows_d = self._counting_for(pattern, lambda: diamond_rows(self.arrays, nv, pattern))
            return diamond_counts(rows_d, lo, hi)
        if shape is not None:
            short = self._counting_for(pattern, lambda: short_cycle_rows(self.arrays, nv, pattern))
            return short_cycle_counts(short, lo, hi)
        rows = self._counting_for(pattern, lambda: cycle_rows(self.arrays, nv, pattern))
        return cycle_counts(rows, lo, hi)

    def run(
        self, pattern: Pattern, lo: int, hi: int, emit: bool, limit: int | None = None
    ) -> tuple[int, np.ndarray]:
        """The matches of ``pattern`` found from the roots ``[lo, hi)`` (the data vertices
        the search's first plan vertex takes; every match is found from exactly one root):
        (count, int64 (k, n) external ids if ``emit``, else an empty array). ``limit``:
        keep only the first that many rows (the count stays exact, and the rest is
        counted without being enumerated to the last vertex). A count of a pattern
        :func:`counts_without_search` takes adds up per-root counts found without
        enumerating (:mod:`~dcsm.engine.tree_count`: dynamic programming;
        :mod:`~dcsm.engine.cycle_count`: meeting in the middle;
        :mod:`~dcsm.engine.short_cycles`: wedges; :mod:`~dcsm.engine.diamond_count`: common
        neighbours of a chord), a root being where a tree's root pattern vertex is, a
        cycle's highest-ranked vertex, or a diamond's chord's higher end."""
        n = pattern.num_vertices
        if not emit and counts_without_search(pattern):
            counts = self._counted(pattern, lo, hi)
            if counts is not None:
                total, over = (0, True) if counts.dtype == object else checked_sum(counts)
                # each count fits 64 bits and their sum does not, or each is a Python int
                exact = int(counts.sum(dtype=object)) if over else int(total)
                return exact, np.empty((0, n), np.int64)
            if (lo, hi) != (0, self.num_vertices):
                raise EngineError(past_64_in_a_slice(pattern))
        plans = self._plans(pattern)
        cand = np.zeros((kern.K, self._widest + 1), np.int32)
        out = np.empty((1024 if emit else 1, n), np.int32)
        stop = kern.NO_STOP if limit is None else limit
        total, out, nout = kern.static_matches(
            0, n, emit, stop, self.arrays, lo, hi, plans, cand, out
        )
        ext = self.arrays[5]
        return int(total), ext[out[:nout]] if emit else np.empty((0, n), np.int64)

    def slices(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Cut the roots into at most ``k`` slices of about equal degree sums (the search's
        work grows with them; a hub may take a slice alone): (the cut points, int64 from 0
        to num_vertices, and the degree sum before each, so that a slice's share of the
        work is a difference of the second)."""
        k = max(1, k)
        work = np.zeros(self.num_vertices + 1, np.int64)
        np.cumsum(self.arrays[1][: self.num_vertices], out=work[1:])
        inner = np.searchsorted(work, work[-1] * np.arange(1, k) / k, "left")
        cuts = np.unique(np.concatenate([[0], inner, [self.num_vertices]]))
        return cuts, work[cuts]

    def run_all(
        self, pattern: Pattern, emit: bool, threads: int | None = None
    ) -> tuple[int, np.ndarray]:
        """``run`` over every root, on ``threads`` threads (default: the cores this process
        may use; one for a graph of fewer than PARALLEL_ENTRIES adjacency entries):
        SLICES_PER_THREAD slices a thread of equal degree sums, taken as threads free up,
        their rows concatenated in slice order (the rows ``run`` gives)."""
        n = pattern.num_vertices
        if not emit and tree_plan(pattern) is not None:  # one pass a step, nothing to spread
            return self.run(pattern, 0, self.num_vertices, emit)
        threads = threads or _usable_cores()
        cuts, work = self.slices(threads * SLICES_PER_THREAD)
        if threads <= 1 or work[-1] < PARALLEL_ENTRIES:
            return self.run(pattern, 0, self.num_vertices, emit)  # threads would cost more
        self._plans(pattern)  # planned once (with the shape), before the threads run
        _ = self._widest
        with ThreadPoolExecutor(threads, thread_name_prefix="dcsm-static") as pool:
            parts = list(pool.map(lambda lo, hi: self.run(pattern, int(lo), int(hi), emit),
                                  cuts[:-1], cuts[1:]))  # fmt: skip
        total = sum(count for count, _ in parts)
        rows = np.concatenate([m for _, m in parts]) if emit else np.empty((0, n), np.int64)
        return total, rows
