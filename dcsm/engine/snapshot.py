"""A frozen copy of a graph that static matching runs on away from the engine: what a
backfill runs on beside the stream (``dcsm.service.backfill``).

The CPU kernels release the GIL, so slices of root vertices (:meth:`StaticSnapshot.run` over
``[lo, hi)``) run on other cores while the engine thread goes on applying updates. The
search breaks the pattern's symmetry (:func:`~dcsm.engine.plan.static_plan`): it finds one
embedding of each orbit under the pattern's automorphisms, from exactly one root, and the
rows give each one followed by its images. So the slices' counts add up and their matches,
concatenated in slice order, are the engine's own ``match_static`` rows in its order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..model import Graph, Pattern
from . import cpu_kernels as kern
from .bulk import intern_graph
from .plan import stack_plans, static_plan


@dataclass(frozen=True)
class StaticSnapshot:
    """The kernels' graph arrays ``(off, deg, nbr, elab, vlab, ext)`` (copies, or the
    engine's own arrays for a run that finishes before the next update)."""

    arrays: tuple[np.ndarray, ...]
    num_vertices: int

    @staticmethod
    def from_graph(graph: Graph) -> StaticSnapshot:
        """The snapshot of any engine's exported graph (the GPU engine's, to match it on
        the host beside the stream), built as the CPU engine bulk-loads one."""
        g = intern_graph(graph)
        off, deg, _, nbr, elab, tail = kern.bulk_load(g)
        return StaticSnapshot((off, deg, nbr[:tail], elab[:tail], g.vlab, g.ext), g.num_vertices)

    @cached_property
    def _widest(self) -> int:
        """The largest degree: a candidate list holds at most the neighbours of one
        already-matched vertex (computed once, not once per slice)."""
        return int(self.arrays[1].max(initial=0))

    def run(
        self, pattern: Pattern, lo: int, hi: int, emit: bool, limit: int | None = None
    ) -> tuple[int, np.ndarray]:
        """The matches of ``pattern`` found from the roots ``[lo, hi)`` (the data vertices
        the search's first plan vertex takes; every match is found from exactly one root):
        (count, int64 (k, n) external ids if ``emit``, else an empty array). ``limit``:
        keep only the first that many rows (the count stays exact, and the rest is
        counted without being enumerated to the last vertex)."""
        n = pattern.num_vertices
        # The search runs with symmetry broken; each match it finds is written with the
        # others it stands for right after it (plan.static_plan).
        plans = kern.plan_arrays(stack_plans([static_plan(pattern)]))
        cand = np.zeros((kern.K, self._widest + 1), np.int32)
        out = np.empty((1024 if emit else 1, n), np.int32)
        stop = kern.NO_STOP if limit is None else limit
        total, out, nout = kern.static_matches(
            0, n, emit, stop, self.arrays, lo, hi, plans, cand, out
        )
        ext = self.arrays[5]
        return int(total), ext[out[:nout]] if emit else np.empty((0, n), np.int64)
