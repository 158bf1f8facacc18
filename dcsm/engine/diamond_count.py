"""Counting diamonds (two triangles sharing an edge, the chord) of one vertex label and one
edge label without a search, each from the higher-ranked end of its chord.

A diamond's chord is its only edge in two triangles, so every matching subgraph has one
chord u - v, and the diamonds on it number C(t, 2) for the t common neighbours of u and v
(two different apexes, neither of them u or v). With rank = degree, then id (as in
:mod:`.cycle_count`), a root r marks its neighbours, and each neighbour v ranked below r
counts the marks among its own neighbours: t for the chord r - v. A vertex's row is then
scanned once for each higher-ranked neighbour, few in a power-law graph for any vertex, so
the work is near the graph's size, where the search walks every partial match (17.5 s on a
1M-edge Chung-Lu graph on 2 cores, ``bench/results/scale-up/flip-1128/cpu/``).

Counts are of subgraphs, times the diamond's 4 automorphisms for embeddings (all of them
keep the labels, which are one). A root's count is the diamonds whose chord's higher end it
is, so roots in disjoint ranges count disjoint matches, as a backfill's slices need. A count
past 2^64 - 1 is reported as an overflow, and the caller searches instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..model import Pattern
from .short_cycles import one_label_rows, ring_shape


@dataclass(frozen=True)
class DiamondRows:
    """The fitting edges as rows over vertices numbered by rank (``rank[x]``): vertex r's
    row is ``nbrs[offs[r] : offs[r + 1]]``, ascending; ``scale``: 4 (the automorphisms),
    or 1 for a ``distinct`` pattern."""

    offs: np.ndarray  # int64 (num_vertices + 1,)
    nbrs: np.ndarray  # int32 ranks
    rank: np.ndarray  # int32 (num_vertices,) by vertex id
    scale: int


def diamond_rows(
    arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern
) -> DiamondRows:
    """The rows of ``pattern`` (a diamond by :func:`~.short_cycles.ring_shape`) over the graph
    ``arrays`` of the CPU kernels."""
    shape = ring_shape(pattern)
    assert shape is not None and shape.kind == "diamond"
    offs, nbrs, rank = one_label_rows(arrays, num_vertices, shape.labels[0], shape.edge_label)
    return DiamondRows(offs[0], nbrs, rank, shape.scale)


@njit(cache=True, nogil=True)
def _roots(offs, nbrs, rank, scale, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[x - lo] = scale x the diamonds whose chord's higher end is x, for x in [lo, hi);
    returns whether a count passed 2^64 - 1."""
    mark = np.zeros(offs.shape[0] - 1, np.int8)
    over = False
    s = np.uint64(scale)
    for x in range(lo, hi):
        r = rank[x]
        a, b = offs[r], offs[r + 1]
        for i in range(a, b):
            mark[nbrs[i]] = 1
        total = np.uint64(0)
        for i in range(a, b):
            v = nbrs[i]
            if v >= r:
                break
            t = 0
            for q in range(offs[v], offs[v + 1]):
                t += mark[nbrs[q]]
            c = np.uint64(t)
            add = c * (c - np.uint64(1)) // np.uint64(2) if t > 1 else np.uint64(0)
            sum_ = total + add
            over |= sum_ < total
            total = sum_
        for i in range(a, b):
            mark[nbrs[i]] = 0
        over |= total > np.uint64(0xFFFFFFFFFFFFFFFF) // s
        out[x - lo] = total * s
    return over


def diamond_counts(rows: DiamondRows, lo: int, hi: int) -> np.ndarray | None:
    """The matches whose chord's higher end is each data vertex of ``[lo, hi)`` (uint64), or
    None if a count passed 2^64 - 1."""
    out = np.zeros(max(0, hi - lo), np.uint64)
    over = _roots(rows.offs, rows.nbrs, rows.rank, rows.scale, lo, hi, out)
    return None if over else out
