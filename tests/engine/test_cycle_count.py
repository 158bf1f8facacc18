"""Counting cycles with all-different vertex labels by meeting in the middle
(cycle_count.py), each match from its highest-ranked vertex: the same counts as the search,
per slice of roots, on random labelled graphs, for cycles of 3 to 7 vertices with and
without edge labels; which patterns take it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dcsm.engine.cycle_count import (
    _turned,
    cheapest_walk,
    counts_by_cycle,
    cycle_counts,
    cycle_rows,
    cycle_walk,
    path_counter,
)
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
    rows_ = cycle_rows(snap.arrays, snap.num_vertices, p)
    counts = cycle_counts(rows_, 0, snap.num_vertices)
    assert counts is not None and int(counts.sum()) == searched
    labels = snap.arrays[4][: snap.num_vertices]
    others = ~np.isin(labels, p.vlabels)
    assert not counts[others].any(), "only vertices labelled as a pattern vertex root"
    # Each match is counted at its highest-ranked vertex: a vertex ranked below every
    # neighbour it could close a cycle with (degree 1 or less) roots nothing.
    assert not counts[snap.arrays[1][: snap.num_vertices] <= 1].any()
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


def _rotated(p: Pattern, shift: int, flip: bool) -> Pattern:
    """``p`` (a cycle written 0 - 1 - ... - k-1) with its vertices renumbered: vertex i
    becomes (shift +- i) mod k, so another vertex is 0 and the walk may go the other way."""
    k = p.num_vertices
    new = [((shift - i) if flip else (shift + i)) % k for i in range(k)]
    labels = [0] * k
    for i in range(k):
        labels[new[i]] = int(p.vlabels[i])
    edges = [(new[int(a)], new[int(b)], None if e < 0 else int(e))
             for (a, b), e in zip(p.edges.tolist(), p.elabels.tolist(), strict=True)]  # fmt: skip
    return Pattern.build(p.name, labels, edges)


def test_the_cut_is_the_cheapest_however_the_cycle_is_written() -> None:
    """cheapest_walk prices every start and direction by the labelled path counts of the
    two halves (brute force here: the walks' path counts by sparse products) and keeps the
    least; the same cycle written from any vertex, either way round, takes a cut of that
    price and counts the same."""
    g = chunglu_graph(20_000, 2000, labels=6, edge_labels=2, seed=3)
    snap = StaticSnapshot.from_graph(g)
    nv = snap.num_vertices
    off, deg, nbr, elab, vlab = snap.arrays[:5]
    src = np.repeat(np.arange(nv), deg[:nv])
    dst = np.concatenate([nbr[off[x] : off[x] + deg[x]] for x in range(nv)])
    elabs_all = np.concatenate([elab[off[x] : off[x] + deg[x]] for x in range(nv)])

    def paths(labels: list[int], elabs: list[int]) -> int:
        """Labelled paths by walking counts along the label sequence (a brute-force DP)."""
        cnt = (vlab[:nv] == labels[0]).astype(np.int64)
        for j in range(1, len(labels)):
            ok = (vlab[dst] == labels[j]) & ((elabs[j - 1] < 0) | (elabs_all == elabs[j - 1]))
            nxt = np.zeros(nv, np.int64)
            np.add.at(nxt, dst[ok], cnt[src[ok]])
            cnt = nxt
        return int(cnt.sum())

    def price(labels: list[int], elabs: list[int]) -> int:
        """c_0 .. c_m one way round, and c_0, c_{k-1}, .. c_m the other."""
        k, m = len(labels), len(labels) // 2
        back = [labels[-j % k] for j in range(k - m + 1)]
        back_el = [elabs[(-j - 1) % k] for j in range(k - m)]
        return paths(labels[: m + 1], elabs[:m]) + paths(back, back_el)

    base = cycle([0, 1, 2, 3, 4, 5], [_, 1, _, _, 0, _])
    want = snap.run(base, 0, nv, emit=False)[0]
    labels, elabs = cycle_walk(base)
    k = len(labels)
    prices = [price(*_turned(labels, elabs, s, d)) for s in range(k) for d in (1, -1)]
    assert max(prices) > min(prices), "a graph where the cut matters"
    for shift in range(k):
        for flip in (False, True):
            p = _rotated(base, shift, flip)
            walk = cheapest_walk(p, path_counter(snap.arrays, nv))
            assert price(*walk) == min(prices), (shift, flip)
            fresh = StaticSnapshot.from_graph(g)  # its own memo of counting structures
            assert fresh.run(p, 0, nv, emit=False)[0] == want, (shift, flip)
