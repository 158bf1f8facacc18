"""Counting a tree pattern's matches by dynamic programming, for patterns whose vertex labels
are fixed and pairwise different.

Such a pattern cannot map two of its vertices onto one data vertex (a data vertex has one
label), so its embeddings are exactly its label- and edge-preserving homomorphisms, and those
of a tree are counted without enumerating any: rooted at pattern vertex 0, a vertex's
*message* at data vertex x is the number of ways to map its subtree with itself at x,

    msg_p[x] = [label(x) == label(p)] * prod over children c of p of
               sum over neighbours y of x (edge label as the pattern's edge (p, c)) of msg_c[y]

and the matches with the root at x number msg_0[x]. One pass over the adjacency per pattern
edge: O(pattern edges x graph entries), where enumerating walks every partial match (a
6-vertex labelled path over a 43M-edge power-law graph has some 4e14 of them:
``bench/debug/cycle_walk_model.py``). Nothing is approximate; a count past 2^64 - 1 is
reported as an overflow, and the caller enumerates instead.

Used for counts only (no match is written): :class:`~dcsm.engine.snapshot.StaticSnapshot`
counts a slice of roots as the sum of msg_0 over it, so a backfill's slices and the engine's
``count_static`` take this path. The pattern's ``distinct`` count equals its embedding count
here (its only label-preserving automorphism is the identity).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import ANY_LABEL, Pattern


def labels_all_different(pattern: Pattern) -> bool:
    """Whether every vertex label of ``pattern`` is fixed (no wildcard) and no two are equal:
    then no match maps two pattern vertices onto one data vertex."""
    labels = pattern.vlabels
    return bool((labels != ANY_LABEL).all()) and len(np.unique(labels)) == len(labels)


def counts_by_tree(pattern: Pattern) -> bool:
    """Whether ``pattern`` is a tree whose vertex labels are fixed and pairwise different
    (then :func:`root_counts` counts it)."""
    n = pattern.num_vertices
    # n - 1 edges make a tree: a pattern is connected (Pattern.build checks it)
    return n >= 2 and pattern.num_edges == n - 1 and labels_all_different(pattern)


def tree_order(pattern: Pattern) -> list[tuple[int, int, int]]:
    """(vertex, parent, label of the edge to the parent) in breadth-first order from vertex
    0 (the root's parent is -1)."""
    adj: dict[int, list[tuple[int, int]]] = {}
    for (a, b), lab in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True):
        adj.setdefault(a, []).append((b, lab))
        adj.setdefault(b, []).append((a, lab))
    seen, out = {0}, [(0, -1, ANY_LABEL)]
    for v, _, _ in out:  # grows while it is walked
        for w, lab in adj.get(v, ()):
            if w not in seen:
                seen.add(w)
                out.append((w, v, lab))
    return out


@njit(cache=True, nogil=True, inline="always")
def edge_fits(nbr, elab, vlab, k, want, edge_label):
    """Whether adjacency entry k leads to a vertex labelled ``want`` by an edge matching
    ``edge_label`` (ANY_LABEL: any)."""
    return vlab[nbr[k]] == want and (edge_label == ANY_LABEL or elab[k] == edge_label)


@njit(cache=True, nogil=True)
def _absorb(off, deg, nbr, elab, vlab, nv, want, child_label, edge_label, child, acc):
    """acc[x] *= the sum of child[y] over x's neighbours y labelled ``child_label`` by an
    edge matching ``edge_label``, for every x labelled ``want`` with acc[x] != 0; returns
    whether a sum or product passed 2^64 - 1."""
    over = False
    for x in range(nv):
        a = acc[x]
        if a == 0 or vlab[x] != want:
            continue
        s = np.uint64(0)
        for k in range(off[x], off[x] + deg[x]):
            if not edge_fits(nbr, elab, vlab, k, child_label, edge_label):
                continue
            t = s + child[nbr[k]]
            over |= t < s
            s = t
        p = a * s
        over |= s != 0 and p // s != a
        acc[x] = p
    return over


@njit(cache=True, nogil=True)
def checked_sum(counts):
    """(the sum of ``counts`` (uint64), whether it passed 2^64 - 1)."""
    s = np.uint64(0)
    over = False
    for c in counts:
        t = s + c
        over |= t < s
        s = t
    return s, over


def root_counts(
    arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern
) -> np.ndarray | None:
    """msg_0 (uint64, one a data vertex: the matches of ``pattern`` with its vertex 0 at that
    vertex) over the graph ``arrays`` = (off, deg, nbr, elab, vlab, ...) of the CPU kernels,
    or None if a count passed 2^64 - 1. ``pattern`` must satisfy :func:`counts_by_tree`."""
    off, deg, nbr, elab, vlab = arrays[:5]
    nv = num_vertices
    order = tree_order(pattern)
    labels = pattern.vlabels.tolist()
    msg = [np.where(vlab[:nv] == labels[v], np.uint64(1), np.uint64(0)) for v in range(len(labels))]
    for v, parent, lab in reversed(order[1:]):  # children before their parents
        if _absorb(
            off, deg, nbr, elab, vlab, nv, labels[parent], labels[v], lab, msg[v], msg[parent]
        ):
            return None
        msg[v] = msg[v][:0]  # its parent holds what it counted
    return msg[0]
