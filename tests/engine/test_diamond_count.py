"""Diamonds (two triangles sharing a chord) of one vertex label and one edge label counted
without a search (diamond_count.py), each from the higher-ranked end of its chord: the
search's count in total and per slice of roots, embeddings and distinct subgraphs,
wildcard and fixed labels, however the pattern numbers its vertices; which patterns take
it."""

from __future__ import annotations

import functools
import itertools

import pytest
from helpers import counted_as_searched, ring_kind

from dcsm.engine.diamond_count import diamond_counts, diamond_rows
from dcsm.engine.snapshot import StaticSnapshot, counts_without_search
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern

_ = None  # wildcard label
DIAMOND = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]  # chord 0 - 2
RENUMBERED = [(3, 1), (1, 0), (0, 2), (2, 3), (1, 2)]  # chord 1 - 2


def diamond(label: int | None = _, edge: int | None = _, distinct: bool = False,
            edges: list[tuple[int, int]] = DIAMOND) -> Pattern:  # fmt: skip
    return Pattern.build("diamond", [label] * 4, [(u, v, edge) for u, v in edges], distinct)


@functools.cache
def snapshot(seed: int) -> StaticSnapshot:
    return StaticSnapshot.from_graph(chunglu_graph(4000, 400, labels=2, edge_labels=2, seed=seed))


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("distinct", [False, True])
@pytest.mark.parametrize(("label", "edge"), [(_, _), (_, 1), (0, _), (1, 0)])
@pytest.mark.parametrize("edges", [DIAMOND, RENUMBERED])
def test_diamond_counts_equal_the_search(
    seed: int, distinct: bool, label: int | None, edge: int | None, edges: list
) -> None:
    """The chord count gives the search's count (the search run with emit, which
    enumerates), in total and over slices of roots."""
    p = diamond(label, edge, distinct, edges)
    assert ring_kind(p) == "diamond" and counts_without_search(p)
    snap = snapshot(seed)
    counted_as_searched(snap, p)


def test_a_diamond_is_counted_at_its_chords_higher_end() -> None:
    """Per-root counts: only vertices of the pattern's label root anything, and a vertex of
    degree 2 or less never does (a chord's end has three neighbours in the diamond)."""
    snap = snapshot(1)
    nv = snap.num_vertices
    counts = diamond_counts(diamond_rows(snap.arrays, nv, diamond(0)), 0, nv)
    assert counts is not None and counts.sum() > 0
    assert not counts[snap.arrays[4][:nv] != 0].any()
    assert not counts[snap.arrays[1][:nv] <= 2].any()


@pytest.mark.parametrize(
    "pattern",
    [
        Pattern.build("k4", [_] * 4, [(u, v, _) for u, v in itertools.combinations(range(4), 2)]),
        Pattern.build("c4", [_] * 4, [(i, (i + 1) % 4, _) for i in range(4)]),
        Pattern.build("typed", [0, 0, 1, 1], [(u, v, _) for u, v in DIAMOND]),
        Pattern.build("elabs", [_] * 4, [(u, v, i % 2) for i, (u, v) in enumerate(DIAMOND)]),
        Pattern.build("tailed", [_] * 4, [(0, 1, _), (1, 2, _), (0, 2, _), (2, 3, _)]),
    ],
)
def test_other_patterns_are_not_counted_as_diamonds(pattern: Pattern) -> None:
    assert ring_kind(pattern) != "diamond"
