"""Counting cycles with all-different vertex labels by meeting in the middle
(cycle_count.py): the same counts as the search, per slice of roots, on random labelled
graphs, for cycles of 3 to 7 vertices with and without edge labels; which patterns take it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dcsm.engine.cycle_count import counts_by_cycle, cycle_counts, cycle_rows, cycle_walk
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Pattern

_ = None  # wildcard label


def cycle(labels: list[int | None], elabels: list[int | None] | None = None) -> Pattern:
    k = len(labels)
    el = elabels or [None] * k
    return Pattern.build(f"c{k}", labels, [(i, (i + 1) % k, el[i]) for i in range(k)])


CYCLES = {
    "c3": cycle([0, 1, 2]),
    "c4": cycle([1, 3, 0, 2]),
    "c5": cycle([0, 1, 2, 3, 4]),
    "c6": cycle([0, 1, 2, 3, 4, 5]),
    "c7": cycle([6, 0, 1, 2, 3, 4, 5]),
    "c5-elab": cycle([0, 1, 2, 3, 4], [1, _, 0, _, 1]),
    # vertex 0's neighbours are 1 and 3: the walk goes round 0 -> 1 -> 2 -> 3
    "c4-shuffled": Pattern.build("c4s", [2, 0, 1, 3], [(0, 1, _), (3, 0, _), (1, 2, _), (2, 3, 0)]),
}


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", sorted(CYCLES))
def test_cycle_counts_equal_the_search(seed: int, name: str) -> None:
    """Meeting in the middle gives the search's count (the search run with emit, which
    enumerates), in total and over slices of roots."""
    p = CYCLES[name]
    assert counts_by_cycle(p)
    g = chunglu_graph(4000, 400, labels=7, edge_labels=2, seed=seed)
    snap = StaticSnapshot.from_graph(g)
    searched, rows = snap.run(p, 0, snap.num_vertices, emit=True)
    assert len(rows) == searched
    assert snap.run(p, 0, snap.num_vertices, emit=False)[0] == searched
    cuts, _work = snap.slices(5)
    parts = [snap.run(p, int(lo), int(hi), emit=False)[0] for lo, hi in itertools.pairwise(cuts)]
    assert sum(parts) == searched
    counts = cycle_counts(cycle_rows(snap.arrays, snap.num_vertices, p), 0, snap.num_vertices)
    assert counts is not None and int(counts.sum()) == searched
    labels = snap.arrays[4][: snap.num_vertices]
    assert not counts[labels != p.vlabels[0]].any(), "only vertices labelled as vertex 0 root"
    if name in ("c3", "c4", "c5", "c4-shuffled"):
        assert searched > 0, "a test graph where the pattern occurs"


def test_the_walk_goes_round_from_vertex_0() -> None:
    labels, elabs = cycle_walk(CYCLES["c4-shuffled"])
    assert labels == [2, 0, 1, 3]
    assert elabs == [-1, -1, 0, -1]


def test_only_label_injective_cycles_take_the_path() -> None:
    assert not counts_by_cycle(cycle([0, 1, 0, 2]))  # a label twice
    assert not counts_by_cycle(cycle([0, _, 1]))  # a wildcard
    tailed = Pattern.build("tailed", [0, 1, 2, 3], [(0, 1, _), (1, 2, _), (2, 0, _), (2, 3, _)])
    assert not counts_by_cycle(tailed)
    chorded = Pattern.build(
        "chorded", [0, 1, 2, 3], [(0, 1, _), (1, 2, _), (2, 3, _), (3, 0, _), (0, 2, _)]
    )
    assert not counts_by_cycle(chorded)


def test_a_root_with_no_neighbours_counts_nothing() -> None:
    off = np.zeros(3, np.int64)
    deg = np.zeros(3, np.int32)
    empty = np.zeros(0, np.int32)
    vlab = np.array([0, 1, 2], np.int32)
    counts = cycle_counts(cycle_rows((off, deg, empty, empty, vlab), 3, CYCLES["c3"]), 0, 3)
    assert counts is not None and counts.tolist() == [0, 0, 0]


def test_distinct_cycles_count_as_their_embeddings() -> None:
    """With every vertex label different a ``distinct`` cycle's count is its embeddings',
    and equals the search's."""
    g = chunglu_graph(4000, 400, labels=7, edge_labels=2, seed=1)
    snap = StaticSnapshot.from_graph(g)
    for name in ("c5", "c5-elab"):
        p = CYCLES[name]
        d = Pattern(p.name, p.vlabels, p.edges, p.elabels, distinct=True)
        want = snap.run(d, 0, snap.num_vertices, emit=True)[0]
        assert want > 0
        assert (
            snap.run(d, 0, snap.num_vertices, emit=False)[0]
            == want
            == snap.run(p, 0, snap.num_vertices, emit=False)[0]
        )
