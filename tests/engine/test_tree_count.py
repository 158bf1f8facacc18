"""Counting trees with all-different vertex labels by dynamic programming (tree_count.py):
the same counts as the search, slice by slice, on random labelled graphs; brute force on a
tiny one; the overflow flag; which patterns take the path."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.engine.tree_count import _absorb, counts_by_tree, root_counts
from dcsm.errors import EngineError
from dcsm.loadgen.gen_stream import chunglu_graph
from dcsm.model import Graph, Pattern

_ = None  # wildcard label


def path(labels: list[int | None], elabels: list[int | None] | None = None) -> Pattern:
    el = elabels or [None] * (len(labels) - 1)
    return Pattern.build("path", labels, [(i, i + 1, el[i]) for i in range(len(labels) - 1)])


TREES = {
    "edge": path([0, 1]),
    "path4": path([2, 0, 3, 1]),
    "path6": path([0, 1, 2, 3, 4, 5]),
    "path5-elab": path([0, 1, 2, 3, 4], [1, _, 0, 1]),
    "star5": Pattern.build("star5", [3, 0, 1, 2, 4], [(0, i, None) for i in range(1, 5)]),
    "spider": Pattern.build(
        "spider",
        [1, 0, 2, 3, 4, 5, 6],
        [(0, 1, _), (1, 2, _), (0, 3, 1), (3, 4, _), (0, 5, _), (5, 6, 0)],
    ),  # fmt: skip
}


def graph(seed: int, edges: int = 3000) -> Graph:
    return chunglu_graph(edges, edges // 6, labels=7, edge_labels=2, seed=seed)


def snapshot(g: Graph) -> StaticSnapshot:
    return StaticSnapshot.from_graph(g)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(TREES))
def test_tree_counts_equal_the_search(seed: int, name: str) -> None:
    """The dynamic programme's count equals the search's (run with emit, which enumerates),
    in total and summed over slices of roots."""
    p = TREES[name]
    assert counts_by_tree(p)
    snap = snapshot(graph(seed))
    searched, rows = snap.run(p, 0, snap.num_vertices, emit=True)
    assert len(rows) == searched
    total, none = snap.run(p, 0, snap.num_vertices, emit=False)
    assert none.shape == (0, p.num_vertices)
    assert total == searched
    cuts, _work = snap.slices(7)
    parts = [snap.run(p, int(lo), int(hi), emit=False)[0] for lo, hi in itertools.pairwise(cuts)]
    assert sum(parts) == total
    if name in ("path4", "star5", "spider"):
        assert total > 0, "a test graph where the pattern occurs"


def test_engine_count_static_by_tree_equals_brute_force() -> None:
    """CpuEngine.count_static of labelled trees on a tiny graph: networkx's count of
    label-preserving subgraph monomorphisms (every embedding)."""
    g = graph(4, edges=400)
    eng = CpuEngine()
    eng.load_graph(g)
    G = nx.Graph()
    for vid, lab in zip(g.vertex_ids.tolist(), g.vertex_labels.tolist(), strict=True):
        G.add_node(vid, label=lab)
    for s, d, lab in zip(g.src.tolist(), g.dst.tolist(), g.edge_labels.tolist(), strict=True):
        G.add_edge(s, d, label=lab)
    for name in ("edge", "path4", "star5", "path5-elab"):
        p = TREES[name]
        Q = nx.Graph()
        for i, lab in enumerate(p.vlabels.tolist()):
            Q.add_node(i, label=lab)
        for (a, b), lab in zip(p.edges.tolist(), p.elabels.tolist(), strict=True):
            Q.add_edge(a, b, label=lab)
        gm = nx.algorithms.isomorphism.GraphMatcher(
            G, Q,
            node_match=lambda d, q: d["label"] == q["label"],
            edge_match=lambda d, q: q["label"] < 0 or d["label"] == q["label"],
        )  # fmt: skip
        want = sum(1 for _ in gm.subgraph_monomorphisms_iter())
        assert eng.count_static(p) == want, name


def test_only_label_injective_trees_take_the_path() -> None:
    assert not counts_by_tree(path([0, 1, 0]))  # a label twice
    assert not counts_by_tree(path([0, _, 1]))  # a wildcard
    cycle = Pattern.build("c4", [0, 1, 2, 3], [(0, 1, _), (1, 2, _), (2, 3, _), (3, 0, _)])
    assert not counts_by_tree(cycle)


def test_a_count_past_64_bits_is_flagged() -> None:
    """_absorb reports a sum or a product past 2^64 - 1, and root_counts then gives None (the
    snapshot searches instead)."""
    # x = 0 (label 0) with neighbours 1 and 2 (label 1).
    off = np.array([0, 2, 3], np.int64)
    deg = np.array([2, 1, 1], np.int32)
    nbr = np.array([1, 2, 0, 0], np.int32)
    elab = np.zeros(4, np.int32)
    vlab = np.array([0, 1, 1], np.int32)
    half = np.uint64(1 << 63)
    child = np.array([0, half, half], np.uint64)  # the sum passes 2^64 - 1
    acc = np.array([1, 0, 0], np.uint64)
    assert _absorb(off, deg, nbr, elab, vlab, 3, 0, 1, -1, child, acc)
    child = np.array([0, 1 << 40, 0], np.uint64)
    acc = np.array([1 << 30, 0, 0], np.uint64)  # the product passes it
    assert _absorb(off, deg, nbr, elab, vlab, 3, 0, 1, -1, child, acc)
    child = np.array([0, 3, 4], np.uint64)
    acc = np.array([5, 0, 0], np.uint64)
    assert not _absorb(off, deg, nbr, elab, vlab, 3, 0, 1, -1, child, acc)
    assert acc[0] == 35
    arrays = (off, deg, nbr, elab, vlab)
    assert root_counts(arrays, 3, path([0, 1])).tolist() == [2, 0, 0]


def test_distinct_trees_count_as_their_embeddings() -> None:
    """With every vertex label different the only automorphism is the identity: a
    ``distinct`` tree's count is its embeddings', and equals the search's."""
    snap = snapshot(graph(1))
    for name in ("path6", "spider"):
        p = TREES[name]
        d = Pattern(p.name, p.vlabels, p.edges, p.elabels, distinct=True)
        want = snap.run(d, 0, snap.num_vertices, emit=True)[0]
        assert (
            snap.run(d, 0, snap.num_vertices, emit=False)[0]
            == want
            == snap.run(p, 0, snap.num_vertices, emit=False)[0]
        )


def test_a_slice_past_64_bits_refuses_instead_of_searching_other_roots() -> None:
    """A hub with 600 leaves of each of 7 labels: 600^7 > 2^64 matches of the labelled star
    at one vertex. The search's slices hold other matches than the counting's (its roots
    are another pattern vertex's), so a slice that cannot be counted raises a clear error
    instead of adding a search's slice to the counted ones."""
    k, d = 7, 600
    n = 1 + k * d
    leaves = np.arange(1, n, dtype=np.int64)
    g = Graph(
        vertex_ids=np.arange(n, dtype=np.int64),
        vertex_labels=np.concatenate([[0], np.repeat(np.arange(1, k + 1), d)]).astype(np.int32),
        src=np.zeros(n - 1, np.int64),
        dst=leaves,
        edge_labels=np.zeros(n - 1, np.int32),
    )
    star = Pattern.build("star7", list(range(k + 1)), [(0, x, None) for x in range(1, k + 1)])
    snap = snapshot(g)
    assert counts_by_tree(star) and root_counts(snap.arrays, n, star) is None
    with pytest.raises(EngineError, match="passed 2\\^64 - 1 at one vertex"):
        snap.run(star, 0, n // 2, emit=False)
