"""Counting triangles and 4-cycles of one vertex label and one edge label (the unlabelled
triangle and 4-cycle above all: rings of three or four accounts), 4-cycles of two labels
taking turns (two accounts sharing two devices), and triangles with a pendant edge (a ring
of three with one more account), without a search, each match from its highest-ranked
vertex (a tailed triangle: its triangle's).

Rank is the degree, then the id, as in :mod:`.cycle_count`. Every vertex of such a pattern
is alike, so each matching subgraph has one highest-ranked vertex r, and it is counted
there:

- a triangle r, u, w with w < u < r: r's neighbours ranked below r are marked, and for
  each such u, its neighbours ranked below u that are marked are counted;
- a 4-cycle r, u, w, x with u, w, x < r, w opposite r: for each w, the number c of
  neighbours of r ranked below r whose rows hold w, and C(c, 2) cycles through r and w
  (Chiba and Nishizeki's wedge count).

With labels A and B taking turns, a root labelled A steps to B then back to A, and one
labelled B the other way round. A tailed triangle is a triangle and one more neighbour of
one of its vertices: each triangle found adds the fitting neighbours its three vertices
have outside it. Three or four different vertices come out by construction
(the others rank below r, u != x by the pair, no vertex is its own neighbour), so these
counts are of subgraphs, and the embeddings are each subgraph's label-preserving
automorphisms: 6 for a triangle and 8 for a 4-cycle of one label, 4 for labels taking
turns, 2 for a tailed triangle. Rows hold the ranks of a vertex's neighbours that fit
(label, edge label), in rank order, so each walk stops at the first entry ranked at or
above the root: in a power-law graph a low-degree root walks almost nothing. The search
walks every partial match instead: a 4-cycle count on a 1M-edge Chung-Lu graph took it
100 s on 2 cores, against 0.13 s here (``bench/results/static/short-cycles-1128/``).

A root's count is the subgraphs (``distinct`` patterns) or embeddings whose highest-ranked
vertex it is, so roots in disjoint ranges count disjoint matches, as a backfill's slices
need. Counts only; a count past 2^64 - 1 is reported as an overflow, and the caller
searches instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..model import ANY_LABEL, Pattern
from .cycle_count import cycle_walk, degree_rank, step_rows


def _ring_labels(pattern: Pattern) -> list[int] | None:
    """The vertex labels round ``pattern`` from vertex 0 if it is a triangle or a 4-cycle
    whose edges all carry one label (or all a wildcard), else None."""
    n = pattern.num_vertices
    if n not in (3, 4) or pattern.num_edges != n or len(np.unique(pattern.elabels)) != 1:
        return None
    if not (np.bincount(pattern.edges.ravel(), minlength=n) == 2).all():
        return None  # n edges, connected: a cycle when every degree is 2
    return cycle_walk(pattern)[0]


def alternating(labels: list[int]) -> bool:
    """Whether the ring ``labels`` is a 4-cycle of two fixed labels taking turns (two
    accounts sharing two devices)."""
    a, b = labels[0], labels[1]
    return len(labels) == 4 and labels == [a, b, a, b] and a != b and ANY_LABEL not in (a, b)


def one_label_shape(pattern: Pattern, degrees: list[int]) -> bool:
    """Whether the vertices of ``pattern`` all carry one label (or all a wildcard), its
    edges all carry one label (or all a wildcard), and its vertex degrees, ascending, are
    ``degrees`` (patterns are connected: with four vertices, [1, 2, 2, 3] is the tailed
    triangle and [2, 2, 3, 3] the diamond)."""
    n = pattern.num_vertices
    if n != len(degrees) or 2 * pattern.num_edges != sum(degrees):
        return False
    if len(np.unique(pattern.vlabels)) != 1 or len(np.unique(pattern.elabels)) != 1:
        return False
    return sorted(np.bincount(pattern.edges.ravel(), minlength=n).tolist()) == degrees


def one_label_rows(
    arrays: tuple[np.ndarray, ...], num_vertices: int, label: int, edge_label: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offs int64 (1, num_vertices + 1), nbrs, rank): the edges between vertices labelled
    ``label`` by edges labelled ``edge_label`` (either may be ANY_LABEL) of the graph
    ``arrays``, as :func:`~.cycle_count.step_rows` rows over vertices numbered by
    :func:`~.cycle_count.degree_rank`."""
    rank = degree_rank(arrays[1], num_vertices)
    offs, nbrs = step_rows(arrays, num_vertices, [(label, label, edge_label)], rank)
    return offs, nbrs, rank


@dataclass(frozen=True)
class RingShape:
    """What :func:`ring_shape` found: ``kind`` ("triangle", "cycle4", "tailed" or
    "diamond"); ``labels``, the vertex labels a walk round the ring takes in turn, (L,) for
    one label (ANY_LABEL: any) or (A, B) for a 4-cycle of two labels taking turns;
    ``edge_label`` (ANY_LABEL: any); ``scale``, what a subgraph count is multiplied by (the
    label-preserving automorphisms: 6 for a triangle, 8 for a 4-cycle of one label, 4 for
    labels taking turns or a diamond, 2 for a tailed triangle; 1 for ``distinct``)."""

    kind: str
    labels: tuple[int, ...]
    edge_label: int
    scale: int


_SCALES = {"triangle": 6, "cycle4": 8, "tailed": 2, "diamond": 4}


def ring_shape(pattern: Pattern) -> RingShape | None:
    """The ring ``pattern`` is, if it is counted by wedges or common neighbours here or in
    :mod:`.diamond_count` (and on the device, ``gpu/label_count.py``), else None."""
    edge_label = int(pattern.elabels[0])
    if one_label_shape(pattern, [1, 2, 2, 3]):
        kind, labels = "tailed", [int(pattern.vlabels[0])]
    elif one_label_shape(pattern, [2, 2, 3, 3]):
        kind, labels = "diamond", [int(pattern.vlabels[0])]
    else:
        ring = _ring_labels(pattern)
        if ring is None or not (len(set(ring)) == 1 or alternating(ring)):
            return None
        kind, labels = ("triangle" if len(ring) == 3 else "cycle4"), ring[:2]
        if len(set(ring)) == 1:
            labels = ring[:1]
    scale = 1 if pattern.distinct else 4 if len(labels) == 2 else _SCALES[kind]
    return RingShape(kind, tuple(labels), edge_label, scale)


@dataclass(frozen=True)
class ShortCycleRows:
    """The fitting edges as rows over vertices numbered by rank (``rank[x]``: degree, then
    id): in step t, vertex r's row is ``nbrs[offs[t, r] : offs[t, r + 1]]``, the ranks of
    its neighbours that fit, ascending. One step for a ring of one label (that label to
    itself); two for labels A and B taking turns (A to B, B to A), a root's walk taking
    ``first[r]``, then the other. ``k``: 3 or 4; ``tail``: each triangle weighs the
    fitting neighbours its vertices have outside it (a tailed triangle's pendant);
    ``scale``: :class:`RingShape`'s."""

    offs: np.ndarray  # int64 (steps, num_vertices + 1)
    nbrs: np.ndarray  # int32 ranks
    first: np.ndarray  # int8 (num_vertices,) by rank: a root's first step
    rank: np.ndarray  # int32 (num_vertices,) by vertex id
    k: int
    scale: int
    tail: bool = False


def short_cycle_rows(
    arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern
) -> ShortCycleRows:
    """The rows of ``pattern`` (a triangle, 4-cycle or tailed triangle by
    :func:`ring_shape`) over the graph ``arrays`` of the CPU kernels."""
    nv = num_vertices
    shape = ring_shape(pattern)
    assert shape is not None and shape.kind != "diamond"
    first = np.zeros(nv, np.int8)
    k = 4 if shape.kind == "cycle4" else 3
    if len(shape.labels) == 2:
        a, b = shape.labels
        rank = degree_rank(arrays[1], nv)
        steps = [(a, b, shape.edge_label), (b, a, shape.edge_label)]
        offs, nbrs = step_rows(arrays, nv, steps, rank)
        first[rank[arrays[4][:nv] == b]] = 1
    else:
        offs, nbrs, rank = one_label_rows(arrays, nv, shape.labels[0], shape.edge_label)
    return ShortCycleRows(offs, nbrs, first, rank, k, shape.scale, shape.kind == "tailed")


@njit(cache=True, nogil=True)
def _triangles(offs, nbrs, r, mark, tail):  # type: ignore[no-untyped-def]
    """Triangles whose highest-ranked vertex is r: r's neighbours below it marked, then
    each one's neighbours below itself that are marked; with ``tail``, each triangle
    weighs the neighbours its three vertices have outside it (the pendants). mark is all
    zero before and after."""
    a0, a1 = offs[r], offs[r]
    while a1 < offs[r + 1] and nbrs[a1] < r:
        mark[nbrs[a1]] = 1
        a1 += 1
    total = 0
    for i in range(a0, a1):
        u = nbrs[i]
        for q in range(offs[u], offs[u + 1]):
            w = nbrs[q]
            if w >= u:
                break
            if mark[w] and tail:
                total += (
                    (offs[r + 1] - offs[r]) + (offs[u + 1] - offs[u]) + (offs[w + 1] - offs[w]) - 6
                )
            elif mark[w]:
                total += 1
    for i in range(a0, a1):
        mark[nbrs[i]] = 0
    return np.uint64(total)


@njit(cache=True, nogil=True)
def _four_cycles(offs, back, nbrs, r, cnt, touched):  # type: ignore[no-untyped-def]
    """(4-cycles whose highest-ranked vertex is r, whether the count passed 2^64 - 1): the
    wedges r - u - w through rows ``offs`` then ``back`` (the same rows for one label).
    cnt is all zero before and after."""
    nt = 0
    for i in range(offs[r], offs[r + 1]):
        u = nbrs[i]
        if u >= r:
            break
        for q in range(back[u], back[u + 1]):
            w = nbrs[q]
            if w >= r:
                break
            if cnt[w] == 0:
                touched[nt] = w
                nt += 1
            cnt[w] += 1
    total = np.uint64(0)
    over = False
    for j in range(nt):
        c = np.uint64(cnt[touched[j]])
        cnt[touched[j]] = 0
        t = total + c * (c - np.uint64(1)) // np.uint64(2)  # c < 2^31: the pairs fit
        over |= t < total
        total = t
    return total, over


@njit(cache=True, nogil=True)
def _roots(offs, nbrs, first, rank, k, tail, scale, lo, hi, out):  # type: ignore[no-untyped-def]
    """out[x - lo] = scale x the cycles whose highest-ranked vertex is x, for x in [lo, hi);
    returns whether a count passed 2^64 - 1."""
    steps, nv = offs.shape[0], offs.shape[1] - 1
    cnt = np.zeros(nv, np.int64)  # a triangle's marks, a 4-cycle's wedge counts
    touched = np.empty(nv if k == 4 else 0, np.int32)
    over = False
    s = np.uint64(scale)
    for x in range(lo, hi):
        r = rank[x]
        if k == 3:
            c = _triangles(offs[0], nbrs, r, cnt, tail)
        else:
            t = first[r]
            c, o = _four_cycles(offs[t], offs[(t + 1) % steps], nbrs, r, cnt, touched)
            over |= o
        over |= c > np.uint64(0xFFFFFFFFFFFFFFFF) // s
        out[x - lo] = c * s
    return over


def short_cycle_counts(rows: ShortCycleRows, lo: int, hi: int) -> np.ndarray | None:
    """The matches whose highest-ranked vertex is each data vertex of ``[lo, hi)`` (uint64),
    or None if a count passed 2^64 - 1."""
    out = np.zeros(max(0, hi - lo), np.uint64)
    over = _roots(rows.offs, rows.nbrs, rows.first, rows.rank, rows.k, rows.tail, rows.scale,
                  lo, hi, out)  # fmt: skip
    return None if over else out
