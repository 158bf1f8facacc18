"""Counting a tree pattern's matches by dynamic programming, for patterns whose vertex labels
are fixed and pairwise different, and for trees whose only vertices that could share a data
vertex are leaves of one parent alike (fan-outs: a hub and k accounts).

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
reported as an overflow (the snapshot then counts the tree again in Python integers,
:func:`root_counts_exact`).

Leaves alike (:func:`tree_plan`). Where labels repeat or are wildcards, two pattern vertices
may land on one data vertex, unless they are adjacent (no self-loops). A tree qualifies when
every such pair is two leaves of one parent with the same vertex and edge label, a *group*
of g leaves: they land on g different neighbours of the parent's data vertex, so the group
multiplies the parent's message by the falling factorial s (s - 1) ... (s - g + 1) of the
s neighbours that fit, and no other pair can collide. The root is the first pattern vertex
from which the tree qualifies (for a path of one label, its middle; for a star, its centre),
the same for every slice. A ``distinct`` count divides each root's count by the pattern's
automorphisms, which must all fix the root (every subgraph's embeddings then share their
root); otherwise the pattern is searched.

Used for counts only (no match is written): :class:`~dcsm.engine.snapshot.StaticSnapshot`
counts a slice of roots as the sum of the root's messages over it, so a backfill's slices and
the engine's ``count_static`` take this path. With all-different labels the ``distinct``
count equals the embedding count (the only label-preserving automorphism is the identity).
The device (``gpu/label_count.py``) counts the all-different trees only (:func:`counts_by_tree`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numba import njit

from ..model import ANY_LABEL, Pattern
from .plan import _automorphisms


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


def tree_order(pattern: Pattern, root: int = 0) -> list[tuple[int, int, int]]:
    """(vertex, parent, label of the edge to the parent) in breadth-first order from
    ``root`` (the root's parent is -1)."""
    adj: dict[int, list[tuple[int, int]]] = {}
    for (a, b), lab in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True):
        adj.setdefault(a, []).append((b, lab))
        adj.setdefault(b, []).append((a, lab))
    seen, out = {root}, [(root, -1, ANY_LABEL)]
    for v, _, _ in out:  # grows while it is walked
        for w, lab in adj.get(v, ()):
            if w not in seen:
                seen.add(w)
                out.append((w, v, lab))
    return out


@dataclass(frozen=True)
class TreePlan:
    """How :func:`root_counts` counts a tree: the pattern vertex whose data vertex a count is
    kept by, the absorb steps (child, parent, edge label, g), children before parents, g > 1
    for a group of g leaves alike (the child is one of them), and what each root's count is
    divided by (the automorphisms, for a ``distinct`` pattern; else 1)."""

    root: int
    steps: tuple[tuple[int, int, int, int], ...]
    divisor: int


def _plan_from(pattern: Pattern, root: int) -> TreePlan | None:
    """The plan rooted at ``root``, or None if two vertices that may share a data vertex
    (not adjacent, labels that can be equal) are not leaves of one group there."""
    order = tree_order(pattern, root)
    labels = pattern.vlabels.tolist()
    n = len(labels)
    parent = {v: (p, lab) for v, p, lab in order}
    leaves = set(range(n)) - {p for _, p, _ in order}
    group = {v: (parent[v][0], labels[v], parent[v][1]) for v in leaves if v != root}
    adjacent = {frozenset(e) for e in pattern.edges.tolist()}
    for u, v in itertools.combinations(range(n), 2):
        alike = ANY_LABEL in (labels[u], labels[v]) or labels[u] == labels[v]
        if alike and frozenset((u, v)) not in adjacent:
            if u not in group or group[u] != group.get(v):
                return None
    size: dict[tuple[int, int, int], int] = {}
    for key in group.values():
        size[key] = size.get(key, 0) + 1
    steps, done = [], set()
    for v, p, lab in reversed(order[1:]):  # children before their parents
        if v in group:
            if group[v] in done:
                continue
            done.add(group[v])
            steps.append((v, p, lab, size[group[v]]))
        else:
            steps.append((v, p, lab, 1))
    divisor = 1
    if pattern.distinct:
        autos = _automorphisms(pattern)
        if any(a[root] != root for a in autos):
            return None  # a subgraph's embeddings would not share their root
        divisor = len(autos)
    return TreePlan(root, tuple(steps), divisor)


def tree_plan(pattern: Pattern) -> TreePlan | None:
    """How to count ``pattern`` by dynamic programming (module docstring), or None: it is
    not a tree, or no root makes every pair of vertices that may share a data vertex a group
    of leaves alike. Trees with all-different fixed labels are rooted at pattern vertex 0."""
    n = pattern.num_vertices
    if n < 2 or pattern.num_edges != n - 1:
        return None
    key = (pattern.shape_key, pattern.distinct)
    plan = _PLANS.get(key, _UNKNOWN)
    if plan is _UNKNOWN:  # backfill threads may race here: at worst a plan made twice
        roots = [0] if labels_all_different(pattern) else range(n)
        plan = next((p for r in roots if (p := _plan_from(pattern, r))), None)
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan  # type: ignore[return-value]


_UNKNOWN = object()
_PLANS: dict[tuple, TreePlan | None] = {}


@njit(cache=True, nogil=True, inline="always")
def edge_fits(nbr, elab, vlab, k, want, edge_label):
    """Whether adjacency entry k leads to a vertex labelled ``want`` by an edge matching
    ``edge_label`` (ANY_LABEL: any label, for either)."""
    return (want == ANY_LABEL or vlab[nbr[k]] == want) and (
        edge_label == ANY_LABEL or elab[k] == edge_label
    )


@njit(cache=True, nogil=True, inline="always")
def _row_sum(off, deg, nbr, elab, vlab, x, child_label, edge_label, child):
    """(the sum of child[y] over x's neighbours y labelled ``child_label`` by an edge
    matching ``edge_label``, whether it passed 2^64 - 1)."""
    s = np.uint64(0)
    over = False
    for k in range(off[x], off[x] + deg[x]):
        if edge_fits(nbr, elab, vlab, k, child_label, edge_label):
            t = s + child[nbr[k]]
            over |= t < s
            s = t
    return s, over


@njit(cache=True, nogil=True)
def _absorb(off, deg, nbr, elab, vlab, nv, want, child_label, edge_label, child, acc, g=1):
    """acc[x] *= f(the sum s of child[y] over x's neighbours y labelled ``child_label`` by an
    edge matching ``edge_label``), f(s) = s for g = 1, else the falling factorial s (s - 1)
    ... (s - g + 1) (a group of g leaves alike, whose child messages are 1 or 0), for every x
    labelled ``want`` (ANY_LABEL: any) with acc[x] != 0; returns whether a sum or product
    passed 2^64 - 1."""
    over = False
    for x in range(nv):
        a = acc[x]
        if a == 0 or (want != ANY_LABEL and vlab[x] != want):
            continue
        s, o = _row_sum(off, deg, nbr, elab, vlab, x, child_label, edge_label, child)
        over |= o
        p = a
        for i in range(g):
            f = s - np.uint64(i) if s > np.uint64(i) else np.uint64(0)
            q = p * f
            over |= f != 0 and q // f != p
            p = q
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


def _label_messages(vlab: np.ndarray, nv: int, labels: list[int]) -> list[np.ndarray]:
    """Every pattern vertex's first message: 1 at the data vertices its label fits, else 0."""
    one, zero = np.uint64(1), np.uint64(0)
    return [np.full(nv, one) if lab == ANY_LABEL else np.where(vlab[:nv] == lab, one, zero)
            for lab in labels]  # fmt: skip


def root_counts(
    arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern
) -> np.ndarray | None:
    """The matches of ``pattern`` with its plan's root (:func:`tree_plan`, which must not be
    None) at each data vertex (uint64, divided by the plan's divisor) over the graph
    ``arrays`` = (off, deg, nbr, elab, vlab, ...) of the CPU kernels, or None if a count
    passed 2^64 - 1."""
    plan = tree_plan(pattern)
    assert plan is not None
    off, deg, nbr, elab, vlab = arrays[:5]
    nv = num_vertices
    labels = pattern.vlabels.tolist()
    msg = _label_messages(vlab, nv, labels)
    for v, parent, lab, g in plan.steps:
        if _absorb(
            off, deg, nbr, elab, vlab, nv, labels[parent], labels[v], lab, msg[v], msg[parent], g
        ):
            return None
        msg[v] = msg[v][:0]  # its parent holds what it counted
    counts = msg[plan.root]
    return counts // np.uint64(plan.divisor) if plan.divisor > 1 else counts


@njit(cache=True, nogil=True)
def _neighbour_sums(off, deg, nbr, elab, vlab, nv, want, child_label, edge_label, child, out):
    """out[x] = :func:`_row_sum` for every x labelled ``want`` (ANY_LABEL: any; others 0);
    returns whether a sum passed 2^64 - 1."""
    over = False
    for x in range(nv):
        out[x] = 0
        if want == ANY_LABEL or vlab[x] == want:
            out[x], o = _row_sum(off, deg, nbr, elab, vlab, x, child_label, edge_label, child)
            over |= o
    return over


def root_counts_exact(
    arrays: tuple[np.ndarray, ...], num_vertices: int, pattern: Pattern
) -> np.ndarray:
    """:func:`root_counts` in Python integers (an object array), for the counts that pass
    2^64 - 1 at a vertex (a fan-out of a hub: 600 leaves taken 7 at a time). The same
    steps: each parent's neighbour sums by the numba pass, in uint64 while they fit, else
    over the child messages' 32-bit digits (a digit's sum over a row cannot pass 2^64) put
    together in Python integers; the products and falling factorials in Python integers.
    Slower than root_counts, never a search."""
    plan = tree_plan(pattern)
    assert plan is not None
    off, deg, nbr, elab, vlab = arrays[:5]
    nv = num_vertices
    labels = pattern.vlabels.tolist()
    msg = [m.astype(object) for m in _label_messages(vlab, nv, labels)]
    sums = np.empty(nv, np.uint64)

    def neighbour_sums(child: np.ndarray, parent: int, v: int, lab: int) -> bool:
        return _neighbour_sums(
            off, deg, nbr, elab, vlab, nv, labels[parent], labels[v], lab, child, sums
        )

    for v, parent, lab, g in plan.steps:
        child = msg[v]
        if max(child, default=0) < 1 << 64 and not neighbour_sums(
            child.astype(np.uint64), parent, v, lab
        ):
            s = sums.astype(object)
        else:
            s, rest, shift = np.zeros(nv, object), child, 0
            while rest.any():
                neighbour_sums((rest & 0xFFFFFFFF).astype(np.uint64), parent, v, lab)
                s = s + (sums.astype(object) << shift)
                rest, shift = rest >> 32, shift + 32
        f = s
        for i in range(1, g):  # s (s - 1) ... (s - g + 1): 0 once s < g (a factor is 0)
            f = f * (s - i)
        msg[parent] = msg[parent] * f
    counts = msg[plan.root]
    return counts // plan.divisor if plan.divisor > 1 else counts
