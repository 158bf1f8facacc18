"""Matching plans: how to extend one data edge to every match of a pattern.

Idea
----
An update on data edge ``(a, b)`` changes exactly the matches that map some query edge onto
``{a, b}``. Because a match is injective, the query edge that lands on ``{a, b}`` and its
orientation are unique for a given match, so enumerating, for every query edge ``(x, y)`` and
both orientations, the matches with ``x -> a, y -> b`` finds each affected match exactly once.
Each such (edge, orientation) pair gets a *plan*: a connected matching order that starts with
``x, y`` and, for every later step, the already-matched ("backward") neighbours whose adjacency
lists the candidate must appear in, with the edge label each of those edges must carry.

Static matching (backfill, ``dcsm match``) uses one of these plans: iterating it over every
ordered data edge finds each embedding exactly once, for the same reason. Which one matters
(47x on enron for a tailed triangle started at its tail), so :func:`static_plan` leaves
plan 0 (the pattern's first edge) for one of far lower estimated cost on the data graph's
:class:`GraphShape`.

``distinct`` patterns report each matching subgraph once. We break symmetry the way
Grochow and Kellis do: take the automorphism group ``A`` of the labelled pattern, pick a vertex
``v`` with a non-trivial orbit, require ``f(v) < f(w)`` for every other ``w`` in its orbit,
continue with the stabiliser of ``v`` until ``A`` is trivial. Exactly one embedding of every
subgraph satisfies all constraints, and comparing *external* vertex ids makes the chosen
representative independent of how an engine numbers vertices internally.

Layout (every array padded to ``K = MAX_PATTERN_VERTICES`` so plans of different patterns
stack into one table that a numba or CUDA kernel indexes directly):

========================  ==============  =================================================
array                     dtype, shape    meaning
========================  ==============  =================================================
``order``                 int32 (P, K)    query vertex matched at step i (-1 past n)
``pos``                   int32 (P, K)    step at which query vertex x is matched
``vlabel``                int32 (P, K)    label required at step i (-1 = any)
``start_elabel``          int32 (P,)      label required on the start edge (-1 = any)
``bn_cnt``                int32 (P, K)    number of backward neighbours of step i
``bn_pos``                int32 (P, K, K) their steps (j < i), padded with -1
``bn_elabel``             int32 (P, K, K) label required on edge (step j, step i)
``sym_lt`` / ``sym_gt``   int32 (P, K)    bitmask over steps j < i: f(step i) must be
                                          less / greater than f(step j) (distinct only)
``weight``                int32 (P,)      matches each match of this plan stands for (1
                                          unless reduced by :func:`orbit_plans`)
``images``                int32 (P, A, K) row k < weight: the query-vertex permutation
                                          that turns a found match (query-vertex order)
                                          into the k-th match it stands for; row 0 is the
                                          identity
``flip``                  int32 (P,)      1 where the plan stands for its reversed start
                                          edge too (:func:`orbit_plans`): a counting
                                          engine may run it with the update's endpoints
                                          swapped, whichever side is cheaper
========================  ==============  =================================================

One plan per orbit
------------------
An automorphism ``s`` of the labelled pattern maps oriented query edge ``(x, y)`` onto
``(s(x), s(y))`` and the matches of plan ``(x, y)`` on an update one-to-one onto those of plan
``(s(x), s(y))`` on the same update (``f -> f o s^-1``), so both plans count the same. A
count-mode query therefore runs one plan per orbit of oriented edges under the automorphism
group and weights its count by the orbit's size (:func:`orbit_plans`): a 5-cycle runs 1 plan
instead of 10, a 5-clique 1 instead of 20. An engine that writes each found match's images
(``images``: one permutation per plan of the orbit, ``f o s^-1`` as a row ``r[s^-1]``) does
the same in embeddings mode (the CPU engine). Exact for embeddings; ``distinct`` patterns
keep every plan, because their symmetry-breaking constraints are not invariant under ``s``.

When the orbit of ``(x, y)`` holds ``(y, x)`` too (an automorphism swaps the start edge's
ends: a cycle, a clique, a diamond's middle edge), the matches with ``x -> a, y -> b`` and
those with ``x -> b, y -> a`` are equally many, so a counting engine may take either
orientation of each update (``flip``). Which one costs less depends on the update: for a
4-cycle, scanning the neighbours of the lower-degree end at the first free step does ~3x
less work on a power-law graph than the stream's own orientation (issue 17).

References: DCSM (inter-batch parallel CSM) section 4 for the incremental decomposition;
Grochow & Kellis, RECOMB 2007, for symmetry breaking.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from ..errors import PatternError
from ..model import ANY_LABEL, MAX_PATTERN_VERTICES, Pattern

K = MAX_PATTERN_VERTICES


@dataclass(frozen=True)
class QueryPlan:
    """All plans of one pattern (P = 2 * number of query edges)."""

    pattern: Pattern
    order: np.ndarray
    pos: np.ndarray
    vlabel: np.ndarray
    start_elabel: np.ndarray
    bn_cnt: np.ndarray
    bn_pos: np.ndarray
    bn_elabel: np.ndarray
    sym_lt: np.ndarray
    sym_gt: np.ndarray
    weight: np.ndarray
    images: np.ndarray
    automorphisms: int
    orbit: np.ndarray  # int32 (P,): lowest plan index of the orbit each plan belongs to
    flip: np.ndarray  # int32 (P,): 1 where the plan stands for its reversed start edge too

    @property
    def num_plans(self) -> int:
        return int(self.order.shape[0])

    @property
    def num_vertices(self) -> int:
        return self.pattern.num_vertices


PLAN_ARRAYS = (
    "order",
    "pos",
    "vlabel",
    "start_elabel",
    "bn_cnt",
    "bn_pos",
    "bn_elabel",
    "sym_lt",
    "sym_gt",
    "weight",
    "images",
    "flip",
)


@dataclass(frozen=True)
class PlanTable:
    """Plans of several patterns stacked along the plan axis.

    ``first[q]:first[q + 1]`` are the plans of query slot q; ``nverts[q]`` its vertex count;
    the other arrays are the QueryPlan arrays concatenated.
    """

    first: np.ndarray  # int32 (Q + 1,)
    nverts: np.ndarray  # int32 (Q,)
    order: np.ndarray
    pos: np.ndarray
    vlabel: np.ndarray
    start_elabel: np.ndarray
    bn_cnt: np.ndarray
    bn_pos: np.ndarray
    bn_elabel: np.ndarray
    sym_lt: np.ndarray
    sym_gt: np.ndarray
    weight: np.ndarray
    images: np.ndarray
    flip: np.ndarray


def stack_plans(plans: list[QueryPlan]) -> PlanTable:
    """Concatenate plans of several queries into one table (query slot = list index)."""
    counts = [p.num_plans for p in plans]
    first = np.zeros(len(plans) + 1, np.int32)
    first[1:] = np.cumsum(counts, dtype=np.int64)
    nverts = np.array([p.num_vertices for p in plans], np.int32)
    arrays = {}
    width = max((p.images.shape[1] for p in plans), default=1)
    for name in PLAN_ARRAYS:
        parts = [getattr(p, name) for p in plans]
        if name == "images":  # padded to the widest orbit (rows past a plan's weight unread)
            parts = [_identities(len(x), width - x.shape[1], x) for x in parts]
        if parts:
            arrays[name] = np.ascontiguousarray(np.concatenate(parts))
        else:
            shape = {
                "start_elabel": (0,),
                "weight": (0,),
                "flip": (0,),
                "bn_pos": (0, K, K),
                "bn_elabel": (0, K, K),
                "images": (0, 1, K),
            }
            arrays[name] = np.zeros(shape.get(name, (0, K)), np.int32)
    return PlanTable(first=first, nverts=nverts, **arrays)


def _labels_equal(a: dict, b: dict) -> bool:
    return a.get("label") == b.get("label")


def _labels_compatible(a: dict, b: dict) -> bool:
    la, lb = a.get("label"), b.get("label")
    return la is None or lb is None or la == lb


def _automorphisms(pattern: Pattern) -> list[tuple[int, ...]]:
    """Automorphisms preserving every label constraint exactly (a wildcard only maps to a
    wildcard). Raises PatternError for ``distinct`` patterns where a structural symmetry
    swaps a wildcard with a fixed label: one subgraph could then match twice through
    embeddings no label-preserving automorphism relates, so "once per subgraph" would need
    a data-dependent rule we do not guess at. Cached by the pattern's shape and labels (a
    6-clique has 720, tens of milliseconds to list, and a backfill plans every slice)."""
    autos, loose_count = _automorphism_group(pattern)
    if pattern.distinct and loose_count != len(autos):
        raise PatternError(
            "distinct",
            "a symmetry of this pattern maps a wildcard-labelled vertex or edge onto a "
            "labelled one, so its subgraphs have no unique representative; give those "
            "vertices/edges explicit labels or set distinct to false",
        )
    return list(autos)


# Automorphism groups by pattern shape and labels (at most _GROUPS_MAX, then cleared).
_GROUPS: dict[tuple, tuple[tuple[tuple[int, ...], ...], int]] = {}
_GROUPS_MAX = 256
# Patterns with more automorphisms are refused: listing them grows as n! (a 7-clique's 5,040
# take ~0.3 s, an 8-clique's 40,320 ~2-6 s, a 10-clique's or a 10-leaf star's 3.6M a minute
# and more, while a registration waits), and each of their matches is counted that often.
MAX_AUTOMORPHISMS = 5040


def _automorphism_group(pattern: Pattern) -> tuple[tuple[tuple[int, ...], ...], int]:
    """(the exact automorphisms, the number of label-compatible ones) of ``pattern``."""
    key = pattern.shape_key
    group = _GROUPS.get(key)
    if group is None:
        n, g = pattern.num_vertices, pattern.to_networkx()
        exact = GraphMatcher(g, g, node_match=_labels_equal, edge_match=_labels_equal)
        loose = GraphMatcher(g, g, node_match=_labels_compatible, edge_match=_labels_compatible)
        autos = tuple(tuple(m[i] for i in range(n)) for m in _at_most(exact.isomorphisms_iter()))
        group = (autos, sum(1 for _ in _at_most(loose.isomorphisms_iter())))
        if len(_GROUPS) >= _GROUPS_MAX:
            _GROUPS.clear()
        _GROUPS[key] = group
    return group


def _at_most(automorphisms: Iterator[dict[int, int]]) -> Iterator[dict[int, int]]:
    """``automorphisms``, or PatternError once there are more than MAX_AUTOMORPHISMS."""
    for k, m in enumerate(automorphisms):
        if k == MAX_AUTOMORPHISMS:
            raise PatternError(
                "edges",
                f"more than {MAX_AUTOMORPHISMS:,} automorphisms (a clique or star this large, "
                "unlabelled); give some vertices labels that tell them apart",
            )
        yield m


def _symmetry_constraints(pattern: Pattern, autos: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    """Grochow-Kellis constraints as pairs (v, w) meaning f(v) < f(w)."""
    constraints: list[tuple[int, int]] = []
    group = autos
    while len(group) > 1:
        # The vertex with the largest orbit breaks the most symmetry per constraint.
        orbits = {v: {s[v] for s in group} for v in range(pattern.num_vertices)}
        v = max(range(pattern.num_vertices), key=lambda x: (len(orbits[x]), -x))
        constraints.extend((v, w) for w in sorted(orbits[v]) if w != v)
        group = [s for s in group if s[v] == v]
    return constraints


def _order_from(pattern: Pattern, x: int, y: int, adj: list[set[int]]) -> list[int]:
    """Connected greedy order starting with x, y: next is the vertex with most matched
    neighbours (tightest candidate set), then a fixed label over a wildcard, then the
    highest query degree, then the smallest id (deterministic)."""
    order = [x, y]
    matched = {x, y}
    n = pattern.num_vertices
    while len(order) < n:
        best = None
        best_key = None
        for z in range(n):
            if z in matched:
                continue
            back = len(adj[z] & matched)
            if back == 0:
                continue
            key = (back, pattern.vlabels[z] != ANY_LABEL, len(adj[z]), -z)
            if best_key is None or key > best_key:
                best, best_key = z, key
        assert best is not None, "pattern is connected"
        order.append(best)
        matched.add(best)
    return order


def plan_query(pattern: Pattern, break_symmetry: bool | None = None) -> QueryPlan:
    """Build every incremental plan of ``pattern`` (two per query edge), with symmetry
    constraints when ``break_symmetry`` (default: for ``distinct`` patterns only)."""
    n = pattern.num_vertices
    adj: list[set[int]] = [set() for _ in range(n)]
    elabel: dict[tuple[int, int], int] = {}
    for (u, v), lab in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True):
        adj[u].add(v)
        adj[v].add(u)
        elabel[(u, v)] = elabel[(v, u)] = lab
    autos = _automorphisms(pattern)
    if break_symmetry is None:
        break_symmetry = pattern.distinct
    constraints = _symmetry_constraints(pattern, autos) if break_symmetry else []

    starts = [(u, v) for u, v in pattern.edges.tolist()]
    starts = [s for uv in starts for s in (uv, uv[::-1])]
    P = len(starts)
    order = np.full((P, K), -1, np.int32)
    pos = np.full((P, K), -1, np.int32)
    vlabel = np.full((P, K), ANY_LABEL, np.int32)
    start_elabel = np.zeros(P, np.int32)
    bn_cnt = np.zeros((P, K), np.int32)
    bn_pos = np.full((P, K, K), -1, np.int32)
    bn_elabel = np.full((P, K, K), ANY_LABEL, np.int32)
    sym_lt = np.zeros((P, K), np.int32)
    sym_gt = np.zeros((P, K), np.int32)
    for p, (x, y) in enumerate(starts):
        o = _order_from(pattern, x, y, adj)
        order[p, :n] = o
        where = {q: i for i, q in enumerate(o)}
        pos[p, :n] = [where[q] for q in range(n)]
        vlabel[p, :n] = pattern.vlabels[o]
        start_elabel[p] = elabel[(x, y)]
        for i in range(2, n):
            back = [j for j in range(i) if o[j] in adj[o[i]]]
            bn_cnt[p, i] = len(back)
            bn_pos[p, i, : len(back)] = back
            bn_elabel[p, i, : len(back)] = [elabel[(o[j], o[i])] for j in back]
        for v, w in constraints:  # f(v) < f(w); checked at the later of the two steps
            iv, iw = where[v], where[w]
            if iv > iw:
                sym_lt[p, iv] |= 1 << iw
            else:
                sym_gt[p, iw] |= 1 << iv
    return QueryPlan(
        pattern=pattern,
        order=order,
        pos=pos,
        vlabel=vlabel,
        start_elabel=start_elabel,
        bn_cnt=bn_cnt,
        bn_pos=bn_pos,
        bn_elabel=bn_elabel,
        sym_lt=sym_lt,
        sym_gt=sym_gt,
        weight=np.ones(P, np.int32),
        images=_identities(P, 1),
        automorphisms=len(autos),
        orbit=_edge_orbits(starts, autos),
        flip=np.zeros(P, np.int32),
    )


def _edge_orbits(starts: list[tuple[int, int]], autos: list[tuple[int, ...]]) -> np.ndarray:
    """For each oriented start edge, the lowest index of an oriented edge it maps onto."""
    index = {s: i for i, s in enumerate(starts)}
    return np.array([min(index[(a[x], a[y])] for a in autos) for x, y in starts], np.int32)


@dataclass(frozen=True)
class GraphShape:
    """What the choice of a static plan knows of the data graph.

    Attributes:
        excess_degree: sum of d^2 over sum of d, the mean degree of a vertex reached along
            an edge (a hub is reached d times).
        closure: the chance that two neighbours of a vertex are adjacent (wedges sampled in
            proportion to d(d-1): the global clustering coefficient).
        label_share: each vertex label's share of the vertices.
    """

    excess_degree: float
    closure: float
    label_share: dict[int, float]

    def share(self, label: int) -> float:
        return 1.0 if label == ANY_LABEL else self.label_share.get(label, 0.0)


# The estimate ranks plans within about 2x of their measured cost (enron, citeseer: the
# direction of a symmetry constraint weighs as much as its place, and the model sees only
# its place): plan 0 stays unless another is estimated TRUST times cheaper.
TRUST = 4.0


def static_cost(plan: QueryPlan, p: int, shape: GraphShape) -> float:
    """Estimated work of plan ``p`` over every data edge, per data edge: at each later step
    the partial matches walk one neighbour list (``excess_degree`` entries); a candidate
    survives each further backward neighbour with probability ``closure``, a label with its
    share, and each symmetry constraint checked at the step with probability 1/2."""

    def kept(i: int) -> float:
        checks = bin(int(plan.sym_lt[p, i])).count("1") + bin(int(plan.sym_gt[p, i])).count("1")
        return shape.share(int(plan.vlabel[p, i])) * 0.5**checks

    d = shape.excess_degree
    partial = kept(0) * kept(1)
    work = 0.0
    for i in range(2, plan.num_vertices):
        work += partial * d
        partial *= d * shape.closure ** (int(plan.bn_cnt[p, i]) - 1) * kept(i)
    return work


def static_plan(
    pattern: Pattern, shape: GraphShape | None = None, start: int | None = None
) -> QueryPlan:
    """The plan for matching ``pattern`` in a static graph, with the pattern's symmetry
    broken: one plan of :func:`plan_query` alone (run from every ordered data edge, it finds
    each match once): plan ``start`` if given, else plan 0 unless :func:`static_cost` on
    ``shape`` finds one ``TRUST`` times cheaper, then the cheapest (the lowest index among
    equals: the choice is deterministic).

    Matched as embeddings, a pattern runs with the symmetry constraints of its
    automorphism group (those that keep every label constraint exactly). The group acts
    freely on the embeddings, so each orbit holds |Aut| of them and exactly one meets the
    constraints: the search visits about 1/|Aut| of the embeddings (gMatch and EGSM break
    symmetry the same way), and each match it finds stands for |Aut| (``weight``), written
    through ``images``: every automorphism's inverse, the identity first. A ``distinct``
    pattern already runs with its constraints and keeps the matches it finds."""
    plan = plan_query(pattern, break_symmetry=True)
    if start is None:
        if shape is None:
            costs = [0.0]
        else:
            costs = [static_cost(plan, p, shape) for p in range(plan.num_plans)]
        start = 0 if costs[0] <= TRUST * min(costs) else int(np.argmin(costs))
    first = {name: getattr(plan, name)[start : start + 1] for name in PLAN_ARRAYS}
    if not pattern.distinct:
        n, autos = pattern.num_vertices, _automorphisms(pattern)
        first["weight"] = np.array([len(autos)], np.int32)
        first["images"] = _identities(1, len(autos))
        first["images"][0, :, :n] = sorted(tuple(np.argsort(s).tolist()) for s in autos)
    return replace(plan, **first, orbit=np.zeros(1, np.int32))


def orbit_plans(plan: QueryPlan) -> QueryPlan:
    """One plan per orbit of oriented edges, weighted by the orbit's size, with the images
    that give every match of the orbit's other plans from a match of this one (module
    docstring); ``plan`` itself for ``distinct`` patterns."""
    if plan.pattern.distinct:
        return plan
    n = plan.num_vertices
    keep = np.nonzero(plan.orbit == np.arange(plan.num_plans))[0]
    sizes = np.bincount(plan.orbit, minlength=plan.num_plans)[keep].astype(np.int32)
    autos = _automorphisms(plan.pattern)
    start = plan.order[:, :2].tolist()  # each plan's oriented start edge (x, y)
    images = _identities(len(keep), int(sizes.max()))
    for r, p in enumerate(keep):
        x, y = start[p]
        for k, q in enumerate(np.nonzero(plan.orbit == p)[0][1:], start=1):
            # One automorphism per plan of the orbit (any that maps the start edge will do:
            # f -> f o s^-1 maps plan p's matches one-to-one onto plan q's).
            s = next(s for s in autos if [s[x], s[y]] == start[q])
            images[r, k, :n] = np.argsort(s)  # s^-1
    arrays = {name: getattr(plan, name)[keep] for name in PLAN_ARRAYS}
    arrays["weight"] = sizes
    arrays["images"] = images
    # Plans 2k and 2k + 1 are one query edge's two orientations (plan_query's starts).
    arrays["flip"] = (plan.orbit[keep ^ 1] == keep).astype(np.int32)
    return replace(plan, **arrays, orbit=np.arange(len(keep), dtype=np.int32))


def _identities(p: int, a: int, before: np.ndarray | None = None) -> np.ndarray:
    """int32 (p, a, K) identity permutations, after ``before`` (p, b, K) if given."""
    ident = np.tile(np.arange(K, dtype=np.int32), (p, a, 1))
    return ident if before is None else np.concatenate([before, ident], axis=1)
