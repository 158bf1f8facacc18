"""Triangles and 4-cycles of one vertex label and one edge label counted without a search
(short_cycles.py), each match from its highest-ranked vertex: the search's count in total
and per slice of roots, embeddings and distinct subgraphs, wildcard and fixed labels;
networkx's count on a plain graph; which patterns take it."""

from __future__ import annotations

import functools

import networkx as nx
import numpy as np
import pytest
from helpers import counted_as_searched, ring_kind

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.short_cycles import (
    ring_shape,
    short_cycle_counts,
    short_cycle_rows,
)
from dcsm.engine.snapshot import StaticSnapshot, counts_without_search
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Graph, Pattern

_ = None  # wildcard label


def ring(k: int, label: int | None = _, edge: int | None = _, distinct: bool = False) -> Pattern:
    edges = [(i, (i + 1) % k, edge) for i in range(k)]
    return Pattern.build(f"c{k}", [label] * k, edges, distinct)


def alternating(a: int, b: int, edge: int | None = _, distinct: bool = False) -> Pattern:
    edges = [(i, (i + 1) % 4, edge) for i in range(4)]
    return Pattern.build("c4-ab", [a, b, a, b], edges, distinct)


@functools.cache
def labelled_snapshot(seed: int) -> StaticSnapshot:
    return StaticSnapshot.from_graph(chunglu_graph(4000, 400, labels=2, edge_labels=2, seed=seed))


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize(("label", "edge"), [(_, _), (_, 1), (0, _), (1, 0)])
@pytest.mark.parametrize("k", [3, 4])
def test_counts_equal_the_search(
    seed: int, distinct: bool, label: int | None, edge: int | None, k: int
) -> None:
    """The wedge count gives the search's count (the search run with emit, which
    enumerates), in total and over slices of roots."""
    p = ring(k, label, edge, distinct)
    assert ring_kind(p) in ("triangle", "cycle4") and counts_without_search(p)
    snap = labelled_snapshot(seed)
    counted_as_searched(snap, p)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize(("a", "b", "edge"), [(0, 1, _), (1, 0, 0)])
def test_alternating_rings_count_as_the_search_counts(
    seed: int, distinct: bool, a: int, b: int, edge: int | None
) -> None:
    """A 4-cycle of labels A, B, A, B: roots of either label, each walking to the other
    label and back; the search's count, whole and over slices."""
    p = alternating(a, b, edge, distinct)
    assert ring_kind(p) in ("triangle", "cycle4")
    snap = labelled_snapshot(seed)
    counted_as_searched(snap, p)
    counts = short_cycle_counts(short_cycle_rows(snap.arrays, snap.num_vertices, p), 0,
                                snap.num_vertices)  # fmt: skip
    labels = snap.arrays[4][: snap.num_vertices]
    assert counts is not None and counts[labels == a].any() and counts[labels == b].any()


def tailed(label: int | None = _, edge: int | None = _, distinct: bool = False,
           edges: tuple = ((0, 1), (1, 2), (2, 0), (0, 3))) -> Pattern:  # fmt: skip
    return Pattern.build("tailed", [label] * 4, [(u, v, edge) for u, v in edges], distinct)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize(("label", "edge"), [(_, _), (_, 1), (0, _), (1, 0)])
@pytest.mark.parametrize(
    "edges", [((0, 1), (1, 2), (2, 0), (0, 3)), ((3, 2), (2, 0), (0, 3), (1, 0))]
)
def test_tailed_triangles_count_as_the_search_counts(
    seed: int, distinct: bool, label: int | None, edge: int | None, edges: tuple
) -> None:
    """A triangle with a pendant edge: each triangle weighs the fitting neighbours outside
    it of its three vertices; the search's count, whole and over slices, however the
    pattern numbers its vertices."""
    p = tailed(label, edge, distinct, edges)
    assert ring_kind(p) == "tailed" and counts_without_search(p)
    counted_as_searched(labelled_snapshot(seed), p)


def test_networkx_counts_the_same_rings() -> None:
    """On a plain random graph: 6 embeddings a triangle and 8 a 4-cycle, networkx's
    triangles and its cycles of length 4, through the CPU engine's count."""
    g = nx.gnm_random_graph(60, 300, seed=7)
    src, dst = (np.array(col, np.int64) for col in zip(*g.edges, strict=True))
    eng = CpuEngine()
    ids = np.arange(60, dtype=np.int64)
    labels, elabels = np.zeros(60, np.int32), np.zeros(len(src), np.int32)
    eng.load_graph(Graph(ids, labels, src, dst, elabels))
    triangles = sum(nx.triangles(g).values()) // 3
    squares = sum(1 for c in nx.simple_cycles(g, length_bound=4) if len(c) == 4)
    assert triangles > 0 and squares > 0
    assert eng.count_static(ring(3)) == 6 * triangles
    assert eng.count_static(ring(4)) == 8 * squares
    assert eng.count_static(ring(4, distinct=True)) == squares


def test_each_ring_is_counted_at_its_highest_ranked_vertex() -> None:
    """Per-root counts: only vertices of the pattern's label root anything, and a vertex of
    degree 1 or less never does (it ranks below any neighbour it could close a ring with)."""
    snap = labelled_snapshot(1)
    nv = snap.num_vertices
    for k in (3, 4):
        counts = short_cycle_counts(short_cycle_rows(snap.arrays, nv, ring(k, 0)), 0, nv)
        assert counts is not None and counts.sum() > 0
        assert not counts[snap.arrays[4][:nv] != 0].any()
        assert not counts[snap.arrays[1][:nv] <= 1].any()


@pytest.mark.parametrize(
    "pattern",
    [
        ring(5),  # a 5-cycle: searched
        Pattern.build("mixed", [0, 0, 1, 1], [(0, 1, _), (1, 2, _), (2, 3, _), (3, 0, _)]),
        Pattern.build("elabs", [_] * 4, [(0, 1, 0), (1, 2, 1), (2, 3, 0), (3, 0, 1)]),
        Pattern.build("path", [_] * 4, [(0, 1, _), (1, 2, _), (2, 3, _)]),
        Pattern.build("diamond", [_] * 4, [(0, 1, _), (1, 2, _), (2, 3, _), (3, 0, _), (0, 2, _)]),
        Pattern.build("c4-typed", [0, 1, 2, 3], [(i, (i + 1) % 4, _) for i in range(4)]),
        Pattern.build("c4-ab-any", [0, 1, 0, _], [(i, (i + 1) % 4, _) for i in range(4)]),
        Pattern.build("c4-aabb", [0, 1, 1, 0], [(i, (i + 1) % 4, _) for i in range(4)]),
        Pattern.build("c3-aab", [0, 0, 1], [(0, 1, _), (1, 2, _), (2, 0, _)]),
        Pattern.build("tailed-ab", [0, 0, 0, 1], [(0, 1, _), (1, 2, _), (2, 0, _), (0, 3, _)]),
    ],
)
def test_other_patterns_are_not_counted_by_wedges(pattern: Pattern) -> None:
    assert ring_kind(pattern) in (None, "diamond")  # diamonds: common neighbours, not wedges


def _tailed(label: int | None = _, edge: int | None = _) -> Pattern:
    edges = [(0, 1, edge), (1, 2, edge), (2, 0, edge), (0, 3, edge)]
    return Pattern.build("tailed", [label] * 4, edges)


def _diamond(label: int | None = _, distinct: bool = False) -> Pattern:
    edges = [(0, 1, _), (1, 2, _), (2, 0, _), (1, 3, _), (3, 2, _)]
    return Pattern.build("diamond", [label] * 4, edges, distinct)


@pytest.mark.parametrize(
    ("pattern", "want"),
    [
        (ring(3), ("triangle", (-1,), -1, 6)),
        (ring(3, 2, 1, distinct=True), ("triangle", (2,), 1, 1)),
        (ring(4, 0), ("cycle4", (0,), -1, 8)),
        (alternating(3, 1, 0), ("cycle4", (3, 1), 0, 4)),
        (alternating(3, 1, distinct=True), ("cycle4", (3, 1), -1, 1)),
        (_tailed(1, 0), ("tailed", (1,), 0, 2)),
        (_diamond(), ("diamond", (-1,), -1, 4)),
        (_diamond(0, distinct=True), ("diamond", (0,), -1, 1)),
        (ring(5), None),  # a 5-cycle: searched
        (Pattern.build("c3-mixed", [0, 0, 1], [(0, 1, _), (1, 2, _), (2, 0, _)]), None),
        (Pattern.build("c4-elabs", [0] * 4, [(0, 1, 0), (1, 2, 1), (2, 3, 0), (3, 0, 1)]), None),
        (Pattern.build("c4-aabb", [0, 0, 1, 1], [(i, (i + 1) % 4, _) for i in range(4)]), None),
        (Pattern.build("path", [0] * 4, [(0, 1, _), (1, 2, _), (2, 3, _)]), None),
    ],
)
def test_ring_shape_names_each_ring_once(pattern: Pattern, want: tuple | None) -> None:
    """ring_shape, which the CPU engine's rows and the device's ring counter both read: the
    kind, the labels a walk round takes in turn, the edge label and the automorphisms a
    subgraph counts for (1 for distinct), or None for what is searched instead."""
    got = ring_shape(pattern)
    assert (got and (got.kind, got.labels, got.edge_label, got.scale)) == want
