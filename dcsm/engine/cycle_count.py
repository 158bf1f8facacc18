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
path steps (``bench/debug/cycle_walk_model.py``). Counts only; a count past 2^64 - 1 is
reported as an overflow, and the caller enumerates instead.

Each match is counted once, from its highest-ranked vertex (rank: degree, then id). A root x
takes the walk that starts at the pattern vertex of x's label, and every path from x goes
through lower-ranked vertices only. Rows are kept in rank order, so a step stops at the
first neighbour ranked at or above the root. In a power-law graph a low-degree root then
walks almost nothing, and a hub walks its lower-ranked part only. For the labelled 6-cycle
on a 10M-edge Chung-Lu graph (8 labels) that is 29x fewer row entries than rooting every
match at one pattern vertex (1.03e8 against 2.95e9, ``bench/debug/cycle_rank_model.py``),
and the count 8x faster (``bench/results/backfill/rank-1128/``). A root's count is
then the matches whose highest-ranked vertex it is: roots in disjoint ranges still count
disjoint matches, as a backfill's slices need.

The device (``gpu/label_count.py``) counts the same way: the ranks there are the compact
indices of its count arrays, and each step's rows are kept in rank order as here.
:func:`cheapest_walk` prices the cut of a walk rooted at one pattern vertex, the method
before ranking, for the host models that compare the two
(``bench/debug/cycle_rank_model.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

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
    (``count_paths``: :func:`path_counter` in host models; each path asked once, with its
    reverse, which has as many) and the least kept, the first on a tie from vertex 0 on. On
    the 43M-edge graph of ``bench/results/backfill/cycle-model-1128/`` the labelled
    6-cycle's cuts price 6.1e10 and 9.7e10 steps: the same cycle written from another
    vertex took the dearer one."""
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
    """The graph's edges for each step of the walks, as rows over vertices numbered by rank
    (``rank[x]``: degree, then id), each row in rank order. The walk from a root of rank r
    is ``walk_steps[root_walk[r]]`` (the walk that starts at the pattern vertex of the
    root's label; -1: a label the cycle lacks), step s of it going through ``offs[t]`` for
    t = walk_steps[w, s]: vertex r's row is ``nbrs[offs[t, r] : offs[t, r + 1]]``. Steps
    0..m-1 go forward from c_0 to c_m, steps m..k-2 backward from c_0 to c_{m+1}, step k-1
    from c_{m+1} into c_m. The walks share the rows of equal steps."""

    offs: np.ndarray  # int64 (distinct steps, num_vertices + 1), by rank
    nbrs: np.ndarray  # int32 ranks
    walk_steps: np.ndarray  # int32 (k, k): each walk's steps, as rows of offs
    root_walk: np.ndarray  # int8 (num_vertices,) by rank
    rank: np.ndarray  # int32 (num_vertices,) by vertex id
    m: int


@njit(cache=True, nogil=True, parallel=True)
def _rows_pass(off, deg, nbr, elab, vlab, nv, rank, src, dst, lab, offs, out, fill):
    """One pass over the graph for every step t = (src[t], dst[t], lab[t]): without ``fill``,
    offs[t, rank[x] + 1] = how many of x's neighbours step t goes to; with it, those
    neighbours' ranks into out from offs[t, rank[x]] on, each row sorted."""
    for x in prange(nv):
        r = rank[x]
        for t in range(src.shape[0]):
            if src[t] != ANY_LABEL and vlab[x] != src[t]:
                continue
            p = offs[t, r] if fill else 0
            q = p
            for k in range(off[x], off[x] + deg[x]):
                if edge_fits(nbr, elab, vlab, k, dst[t], lab[t]):
                    if fill:
                        out[q] = rank[nbr[k]]
                    q += 1
            if fill:
                out[p:q] = np.sort(out[p:q])
            else:
                offs[t, r + 1] = q


def degree_rank(deg: np.ndarray, num_vertices: int) -> np.ndarray:
    """int32 (num_vertices,): each vertex's rank by degree, then id (0: the lowest)."""
    nv = num_vertices
    rank = np.empty(nv, np.int32)
    rank[np.lexsort((np.arange(nv), deg[:nv]))] = np.arange(nv, dtype=np.int32)
    return rank


def step_rows(
    arrays: tuple[np.ndarray, ...],
    num_vertices: int,
    steps: list[tuple[int, int, int]],
    rank: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(offs int64 (len(steps), num_vertices + 1), nbrs int32): the rows of each step (the
    start's label, the end's, the edge's; any may be ANY_LABEL) over the graph ``arrays``
    of the CPU kernels, with vertices numbered by ``rank`` (a permutation of the ids): row
    r of step t is ``nbrs[offs[t, r] : offs[t, r + 1]]``, the ranks of the vertices it goes
    to, in order."""
    off, deg, nbr, elab, vlab = arrays[:5]
    nv = num_vertices
    src, dst, lab = (np.array(col, np.int32).reshape(-1) for col in zip(*steps, strict=True))
    offs = np.zeros((len(steps), nv + 1), np.int64)
    empty = np.zeros(0, np.int32)
    _rows_pass(off, deg, nbr, elab, vlab, nv, rank, src, dst, lab, offs, empty, False)
    base = 0
    for t in range(len(steps)):
        offs[t, 0] = base
        np.cumsum(offs[t], out=offs[t])
        base = int(offs[t, nv])
    nbrs = np.empty(base, np.int32)
    _rows_pass(off, deg, nbr, elab, vlab, nv, rank, src, dst, lab, offs, nbrs, True)
    return offs, nbrs


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


def ranked_walks(pattern: Pattern) -> tuple[list[int], list[tuple[int, int, int]], np.ndarray]:
    """The walks of a ranked count (one from each vertex of ``pattern``, which satisfies
    :func:`counts_by_cycle`, each the way :func:`cycle_walk` goes): (the labels of their
    start vertices, walk j's from the j-th; the distinct steps of all of them, as
    :func:`cycle_steps` gives them; int32 (k, k): each walk's steps, as indices into that
    list). A root takes the walk that starts at its label; the walks share equal steps'
    rows (the host's :func:`cycle_rows`, the device's ``gpu/label_count.py``)."""
    labels, elabs = cycle_walk(pattern)
    k = len(labels)
    distinct: dict[tuple[int, int, int], int] = {}
    walk_steps = np.empty((k, k), np.int32)
    for w in range(k):
        for s, step in enumerate(cycle_steps(*_turned(labels, elabs, w, 1))):
            walk_steps[w, s] = distinct.setdefault(step, len(distinct))
    return labels, list(distinct), walk_steps


def cycle_rows(arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern) -> CycleRows:
    """The ranked rows of every walk of ``pattern`` (which satisfies :func:`counts_by_cycle`)
    over the graph ``arrays`` = (off, deg, nbr, elab, vlab, ...) of the CPU kernels: from
    each start vertex the way :func:`cycle_walk` goes (with each match walked from its
    highest-ranked vertex, the cut's price no longer tells the walks apart: 10M edges, the
    labelled 6-cycle walked 3.4 s either way and 3.8 s priced), the rows of each distinct
    step built once (:func:`step_rows`)."""
    deg, vlab = arrays[1], arrays[4]
    nv = num_vertices
    labels, steps, walk_steps = ranked_walks(pattern)
    k = len(labels)
    rank = degree_rank(deg, nv)
    offs, nbrs = step_rows(arrays, nv, steps, rank)
    root_walk = np.full(nv, -1, np.int8)
    for w, lab in enumerate(labels):
        root_walk[rank[vlab[:nv] == lab]] = w
    return CycleRows(offs, nbrs, walk_steps, root_walk, rank, k // 2)


@njit(cache=True, nogil=True)
def _step(row_off, nbrs, cnt, layer, touched, nt, bound):
    """Extend the paths ending at the vertices ``layer`` by one step (its rows ``row_off``
    into ``nbrs``, each in rank order) to the vertices ranked below ``bound``: their counts
    added into cnt of the vertices reached, each new one appended to touched[nt:]. Returns
    (the new end of touched, whether a count passed 2^64 - 1)."""
    over = False
    for y in layer:
        c = cnt[y]
        for q in range(row_off[y], row_off[y + 1]):
            z = nbrs[q]
            if z >= bound:
                break
            if cnt[z] == 0:
                touched[nt] = z
                nt += 1
            t = cnt[z] + c
            over |= t < c
            cnt[z] = t
    return nt, over


@njit(cache=True, nogil=True)
def _roots(offs, nbrs, walk_steps, m, rank, root_walk, lo, hi, out):
    """out[x - lo] = the matches whose highest-ranked vertex is x, for every x of [lo, hi);
    returns whether a count passed 2^64 - 1. Counts and layers are kept by rank."""
    k = walk_steps.shape[1]
    nv = offs.shape[1] - 1
    cnt = np.zeros(nv, np.uint64)
    touched = np.empty(nv, np.int32)
    over = False
    for x in range(lo, hi):
        out[x - lo] = 0
        r = rank[x]
        w = root_walk[r]
        if w < 0:
            continue  # a label the cycle lacks
        steps = walk_steps[w]
        first, back = offs[steps[0]], offs[steps[m]]
        if first[r] == first[r + 1] or nbrs[first[r]] >= r:
            continue  # no lower-ranked first step one way
        if back[r] == back[r + 1] or nbrs[back[r]] >= r:
            continue  # or the other
        cnt[r] = 1
        touched[0] = r
        a, b = 0, 1  # touched[a:b]: the last forward layer
        for s in range(m):
            b_next, o = _step(offs[steps[s]], nbrs, cnt, touched[a:b], touched, b, r)
            over |= o
            a, b = b, b_next
        layer = touched[0:1]  # r, then each backward layer
        for s in range(m, k - 1):
            b_next, o = _step(offs[steps[s]], nbrs, cnt, layer, touched, b, r)
            over |= o
            layer = touched[b:b_next]
            b = b_next
        total = np.uint64(0)
        row_off = offs[steps[k - 1]]
        for y in layer:  # into c_m: each arrival times the forward paths there
            c = cnt[y]
            for q in range(row_off[y], row_off[y + 1]):
                z = nbrs[q]
                if z >= r:
                    break
                f = cnt[z]
                if f == 0:
                    continue
                p = c * f
                over |= p // f != c
                t = total + p
                over |= t < total
                total = t
        out[x - lo] = total
        for i in range(b):  # r and every vertex a layer reached
            cnt[touched[i]] = 0
    return over


def cycle_counts(rows: CycleRows, lo: int, hi: int) -> np.ndarray | None:
    """The matches whose highest-ranked vertex is each data vertex of ``[lo, hi)`` (uint64),
    or None if a count passed 2^64 - 1."""
    out = np.zeros(max(0, hi - lo), np.uint64)
    over = _roots(rows.offs, rows.nbrs, rows.walk_steps, rows.m, rows.rank, rows.root_walk,
                  lo, hi, out)  # fmt: skip
    return None if over else out
