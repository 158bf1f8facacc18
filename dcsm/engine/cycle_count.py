"""Counting a cycle pattern's matches by meeting in the middle, for cycles whose vertex
labels are fixed and pairwise different (the laundering ring over typed accounts).

As for trees (:mod:`.tree_count`), such a pattern cannot map two of its vertices onto one
data vertex, so its embeddings are its label-preserving homomorphisms. Walk the cycle
c_0, c_1, ..., c_{k-1} from one of its vertices and cut it at c_0 and c_m, m = k // 2: a match
with c_0 at x is a path x -> ... -> z along c_1..c_m and one along c_{k-1}..c_m ending at the
same z. So the matches with c_0 at x number

    sum over z of F_x[z] * B_x[z]

F_x and B_x counting the two kinds of paths. For each root x both are built layer by layer,
each layer's paths merged per end vertex (a data vertex carries one label, so every layer
holds other vertices than the others and one count array holds them all; the last backward
step multiplies by F_x[z] as it reaches z instead of storing B_x). The work is the rows of
the layers' vertices, never the partial matches: for the labelled 6-cycle over a 43M-edge
power-law graph, enumeration walks some 4e14 partial matches, the two halves at most 6e10
path steps (``bench/debug/cycle_walk_model.py``). Where the cut falls changes that bound
(6.1e10 or 9.7e10 there), so :func:`cheapest_walk` prices every start and direction by the
halves' labelled path counts, a tree count each, and takes the least. Counts only; a count
past 2^64 - 1 is reported as an overflow, and the caller enumerates instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..model import ANY_LABEL, Pattern
from .tree_count import (
    checked_sum,
    counts_by_tree,
    edge_fits,
    labels_all_different,
    root_counts,
)


def counts_by_cycle(pattern: Pattern) -> bool:
    """Whether ``pattern`` is a cycle whose vertex labels are fixed and all different (then
    :func:`cycle_counts` counts it)."""
    n = pattern.num_vertices
    if n < 3 or pattern.num_edges != n or not labels_all_different(pattern):
        return False
    # n edges on a connected pattern (Pattern.build checks it), every degree 2: one cycle
    return bool((np.bincount(pattern.edges.ravel(), minlength=n) == 2).all())


def counts_by_labels(pattern: Pattern) -> bool:
    """Whether ``pattern`` is counted without a search (by :mod:`.tree_count` or this module
    on the host, ``gpu/label_count.py`` on the device): a tree or a cycle whose vertex labels
    are fixed and pairwise different."""
    return counts_by_tree(pattern) or counts_by_cycle(pattern)


def cycle_walk(pattern: Pattern) -> tuple[list[int], list[int]]:
    """(the cycle's vertex labels from pattern vertex 0 on, the label of the edge from each
    to the next), going round through vertex 0's smaller neighbour first."""
    n = pattern.num_vertices
    nbrs: dict[int, list[tuple[int, int]]] = {v: [] for v in range(n)}
    for (a, b), lab in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True):
        nbrs[a].append((b, lab))
        nbrs[b].append((a, lab))
    order, elabs, prev, v = [0], [], -1, 0
    while len(order) < n + 1:
        nxt, lab = min(w for w in nbrs[v] if w[0] != prev)
        order.append(nxt)
        elabs.append(lab)
        prev, v = v, nxt
    labels = pattern.vlabels.tolist()
    return [labels[v] for v in order[:n]], elabs


def _turned(
    labels: list[int], elabs: list[int], start: int, step: int
) -> tuple[list[int], list[int]]:
    """The walk of :func:`cycle_walk` begun at its ``start``-th vertex, going the same way
    (``step`` 1) or the other (-1)."""
    k = len(labels)
    out = [labels[(start + step * j) % k] for j in range(k)]
    edges = [elabs[(start + j) % k] if step > 0 else elabs[(start - j - 1) % k] for j in range(k)]
    return out, edges


def path_counter(
    arrays: tuple[np.ndarray, ...], num_vertices: int
) -> Callable[[list[int], list[int]], float]:
    """Counts the labelled paths labels[0] - ... - labels[-1] (edge labels ``elabs``) of the
    graph ``arrays`` (the CPU kernels'): a tree count (:func:`.tree_count.root_counts`),
    inf past 2^64 - 1."""

    def count(labels: list[int], elabs: list[int]) -> float:
        edges = [(i, i + 1, None if e == ANY_LABEL else e) for i, e in enumerate(elabs)]
        counts = root_counts(arrays, num_vertices, Pattern.build("path", list(labels), edges))
        total, over = (0, True) if counts is None else checked_sum(counts)
        return float("inf") if over else float(total)

    return count


def cheapest_walk(
    pattern: Pattern, count_paths: Callable[[list[int], list[int]], float]
) -> tuple[list[int], list[int]]:
    """The walk round ``pattern`` (as :func:`cycle_walk`) whose cut costs least. The search
    from a root walks the labelled paths of its two halves (merged per end vertex, so at
    most that many steps): c_0 .. c_m one way round and c_0, c_{k-1} .. c_m the other, m =
    k // 2. Every start vertex and both directions are priced by those two path counts
    (``count_paths``: :func:`path_counter` on the host, the device's tree count on the GPU;
    each path asked once, with its reverse, which has as many) and the least kept, the
    first on a tie from vertex 0 on. On the 43M-edge graph of
    ``bench/results/backfill/cycle-model-1128/`` the labelled 6-cycle's cuts price 6.1e10
    and 9.7e10 steps: the same cycle written from another vertex took the dearer one."""
    labels, elabs = cycle_walk(pattern)
    k, m = len(labels), len(labels) // 2
    memo: dict[tuple, float] = {}

    def paths(lab: list[int], el: list[int]) -> float:
        key, back = (tuple(lab), tuple(el)), (tuple(lab[::-1]), tuple(el[::-1]))
        if key not in memo:
            memo[key] = memo[back] if back in memo else count_paths(lab, el)
        return memo[key]

    best, walk = float("inf"), (labels, elabs)
    for start in range(k):
        for step in (1, -1):
            lab, el = _turned(labels, elabs, start, step)
            back = [lab[0], *lab[: m - 1 : -1]]  # c_0, c_{k-1} .. c_m
            back_el = [el[-1], *el[-2 : m - 1 : -1]]
            cost = paths(lab[: m + 1], el[:m]) + paths(back, back_el)
            if cost < best:
                best, walk = cost, (lab, el)
    return walk


@dataclass(frozen=True)
class CycleRows:
    """The graph's edges for each step of the two halves, as rows: step s's row of x is
    ``nbrs[offs[s, x] : offs[s, x + 1]]``, x's neighbours the step may go to (their label
    and the edge's the pattern's). Steps 0..m-1 go forward from c_0 to c_m, steps m..k-2
    backward from c_0 to c_{m+1}, step k-1 from c_{m+1} into c_m."""

    offs: np.ndarray  # int64 (k, num_vertices + 1)
    nbrs: np.ndarray  # int32
    root_label: int
    m: int


@njit(cache=True, nogil=True)
def _count_rows(off, deg, nbr, elab, vlab, nv, src, dst, edge_label, start):
    """start[x + 1] - start[x] = x's neighbours labelled ``dst`` by an edge matching
    ``edge_label`` when x is labelled ``src``, else 0 (start: nv + 1, start[0] set)."""
    for x in range(nv):
        c = 0
        if vlab[x] == src:
            for k in range(off[x], off[x] + deg[x]):
                if edge_fits(nbr, elab, vlab, k, dst, edge_label):
                    c += 1
        start[x + 1] = start[x] + c


@njit(cache=True, nogil=True)
def _fill_rows(off, deg, nbr, elab, vlab, nv, src, dst, edge_label, start, out):
    """The neighbours :func:`_count_rows` counted, into out from start[x] on."""
    for x in range(nv):
        if vlab[x] != src:
            continue
        p = start[x]
        for k in range(off[x], off[x] + deg[x]):
            if edge_fits(nbr, elab, vlab, k, dst, edge_label):
                out[p] = nbr[k]
                p += 1


def cycle_steps(labels: list[int], elabs: list[int]) -> list[tuple[int, int, int]]:
    """(label of the start, label of the end, edge label) of each step of the walk
    ``labels``/``elabs`` cut at c_0 and c_m, m = k // 2: steps 0..m-1 forward from c_0 to
    c_m, steps m..k-2 backward from c_0 to c_{m+1}, step k-1 from c_{m+1} into c_m (the
    host's :func:`cycle_rows` and the device's ``cycle_roots`` walk these)."""
    k, m = len(labels), len(labels) // 2
    steps = [(labels[j - 1], labels[j], elabs[j - 1]) for j in range(1, m + 1)]
    steps += [(labels[(j + 1) % k], labels[j], elabs[j]) for j in range(k - 1, m, -1)]
    steps.append((labels[m + 1], labels[m], elabs[m]))
    return steps


def cycle_rows(arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern) -> CycleRows:
    """The rows of every step of ``pattern`` (which satisfies :func:`counts_by_cycle`) over
    the graph ``arrays`` = (off, deg, nbr, elab, vlab, ...) of the CPU kernels: two passes
    over the rows labelled as the step's start, a step."""
    off, deg, nbr, elab, vlab = arrays[:5]
    labels, elabs = cheapest_walk(pattern, path_counter(arrays, num_vertices))
    k, nv = len(labels), num_vertices
    steps = cycle_steps(labels, elabs)
    offs = np.zeros((k, nv + 1), np.int64)
    for s, (src, dst, lab) in enumerate(steps):
        offs[s, 0] = offs[s - 1, nv] if s else 0
        _count_rows(off, deg, nbr, elab, vlab, nv, src, dst, lab, offs[s])
    nbrs = np.empty(int(offs[k - 1, nv]), np.int32)
    for s, (src, dst, lab) in enumerate(steps):
        _fill_rows(off, deg, nbr, elab, vlab, nv, src, dst, lab, offs[s], nbrs)
    return CycleRows(offs, nbrs, labels[0], k // 2)


@njit(cache=True, nogil=True)
def _step(row_off, nbrs, cnt, layer, touched, nt):
    """Extend the paths ending at the vertices ``layer`` by one step (its rows ``row_off``
    into ``nbrs``): their counts added into cnt of the vertices reached, each new one
    appended to touched[nt:]. Returns (the new end of touched, whether a count passed
    2^64 - 1)."""
    over = False
    for y in layer:
        c = cnt[y]
        for q in range(row_off[y], row_off[y + 1]):
            z = nbrs[q]
            if cnt[z] == 0:
                touched[nt] = z
                nt += 1
            t = cnt[z] + c
            over |= t < c
            cnt[z] = t
    return nt, over


@njit(cache=True, nogil=True)
def _roots(offs, nbrs, m, lo, hi, out):
    """out[x - lo] = the matches with c_0 at x, for every x of [lo, hi); returns whether a
    count passed 2^64 - 1."""
    k = offs.shape[0]
    nv = offs.shape[1] - 1
    cnt = np.zeros(nv, np.uint64)
    touched = np.empty(nv, np.int32)
    over = False
    for x in range(lo, hi):
        out[x - lo] = 0
        if offs[0, x] == offs[0, x + 1] or offs[m, x] == offs[m, x + 1]:
            continue  # no first step one way or the other (or not labelled as c_0)
        cnt[x] = 1
        touched[0] = x
        a, b = 0, 1  # touched[a:b]: the last forward layer
        for s in range(m):
            b_next, o = _step(offs[s], nbrs, cnt, touched[a:b], touched, b)
            over |= o
            a, b = b, b_next
        layer = touched[0:1]  # x, then each backward layer
        for s in range(m, k - 1):
            b_next, o = _step(offs[s], nbrs, cnt, layer, touched, b)
            over |= o
            layer = touched[b:b_next]
            b = b_next
        total = np.uint64(0)
        row_off = offs[k - 1]
        for y in layer:  # into c_m: each arrival times the forward paths there
            c = cnt[y]
            for q in range(row_off[y], row_off[y + 1]):
                f = cnt[nbrs[q]]
                if f == 0:
                    continue
                p = c * f
                over |= p // f != c
                t = total + p
                over |= t < total
                total = t
        out[x - lo] = total
        for i in range(b):  # x and every vertex a layer reached
            cnt[touched[i]] = 0
    return over


def cycle_counts(rows: CycleRows, lo: int, hi: int) -> np.ndarray | None:
    """The matches with the walk's c_0 (``rows.root_label``'s pattern vertex) at each data
    vertex of ``[lo, hi)`` (uint64), or None if a count passed 2^64 - 1."""
    out = np.zeros(max(0, hi - lo), np.uint64)
    return None if _roots(rows.offs, rows.nbrs, rows.m, lo, hi, out) else out
