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
from dcsm.engine.tree_count import _absorb, counts_by_tree, root_counts, tree_plan
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


def brute_force(g: Graph, p: Pattern) -> int:
    """networkx's count of label-preserving subgraph monomorphisms of ``p`` in ``g`` (every
    embedding; a wildcard label matches any)."""
    G, Q = nx.Graph(), nx.Graph()
    for vid, lab in zip(g.vertex_ids.tolist(), g.vertex_labels.tolist(), strict=True):
        G.add_node(vid, label=lab)
    for s, d, lab in zip(g.src.tolist(), g.dst.tolist(), g.edge_labels.tolist(), strict=True):
        G.add_edge(s, d, label=lab)
    for i, lab in enumerate(p.vlabels.tolist()):
        Q.add_node(i, label=lab)
    for (a, b), lab in zip(p.edges.tolist(), p.elabels.tolist(), strict=True):
        Q.add_edge(a, b, label=lab)
    fits = lambda d, q: q["label"] < 0 or d["label"] == q["label"]  # noqa: E731
    gm = nx.algorithms.isomorphism.GraphMatcher(G, Q, node_match=fits, edge_match=fits)
    return sum(1 for _ in gm.subgraph_monomorphisms_iter())


def test_engine_count_static_by_tree_equals_brute_force() -> None:
    """CpuEngine.count_static of labelled trees on a tiny graph: networkx's count."""
    g = graph(4, edges=400)
    eng = CpuEngine()
    eng.load_graph(g)
    for name in ("edge", "path4", "star5", "path5-elab"):
        assert eng.count_static(TREES[name]) == brute_force(g, TREES[name]), name


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


def test_a_tree_past_64_bits_at_one_vertex_counts_exactly() -> None:
    """A hub with 600 leaves of each of 7 labels: 600^7 > 2^64 matches of the labelled star
    at one vertex, and 600^3 x 599^2 x 598^2 of a fan of three and two groups of two:
    root_counts flags the overflow, and the snapshot counts them in Python integers, whole
    and in slices (no search, whose slices would hold other matches)."""
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
    snap = snapshot(g)
    star7 = Pattern.build("star7", list(range(k + 1)), [(0, x, None) for x in range(1, k + 1)])
    fans = Pattern.build("fans", [0, 1, 1, 2, 2, 3, 4, 5],
                         [(0, x, None) for x in range(1, 8)])  # fmt: skip
    for p, want in ((star7, d**7), (fans, d * (d - 1) * d * (d - 1) * d**3)):
        assert root_counts(snap.arrays, n, p) is None  # past 2^64 - 1
        assert snap.run(p, 0, n, emit=False)[0] == want > 2**64
        cuts, _work = snap.slices(4)
        parts = [
            snap.run(p, int(lo), int(hi), emit=False)[0] for lo, hi in itertools.pairwise(cuts)
        ]
        assert sum(parts) == want
    assert counts_by_tree(star7) and not counts_by_tree(fans)
    # One vertex more (label 9) on the hub: the hub's message, 600^7, is the child of the
    # root's step, so its sums are taken in Python integers too.
    g2 = Graph(
        vertex_ids=np.arange(n + 1, dtype=np.int64),
        vertex_labels=np.concatenate([g.vertex_labels, [9]]).astype(np.int32),
        src=np.concatenate([g.src, [0]]),
        dst=np.concatenate([g.dst, [n]]),
        edge_labels=np.zeros(n, np.int32),
    )
    up = Pattern.build(
        "up", [9, *range(k + 1)], [(0, 1, None)] + [(1, x + 1, None) for x in range(1, k + 1)]
    )
    snap2 = snapshot(g2)
    assert root_counts(snap2.arrays, n + 1, up) is None
    assert snap2.run(up, 0, n + 1, emit=False)[0] == d**7


def star(centre: int | None, leaves: list[int | None], elabels: list[int | None] | None = None,
         distinct: bool = False) -> Pattern:  # fmt: skip
    el = elabels or [None] * len(leaves)
    edges = [(0, i + 1, el[i]) for i in range(len(leaves))]
    return Pattern.build("star", [centre, *leaves], edges, distinct)


# Trees whose only vertices that may share a data vertex are leaves alike of one parent.
FANS = {
    "fan3": star(0, [1, 1, 1]),
    "fan4-any-leaves": star(2, [_, _, _, _]),
    "fan3-elab": star(0, [1, 1, 1], [1, 1, 1]),
    "fan2-and-one": star(0, [1, 1, 2]),
    "path3-one-label": path([1, 1, 1]),  # rooted at its middle
    "spider-groups": Pattern.build(
        "spider-groups",
        [0, 1, 2, 2, 3, 4, 4, 5, 5],
        [(0, 1, _), (1, 2, _), (1, 3, _), (0, 4, 1), (4, 5, _), (4, 6, _), (0, 7, _), (0, 8, _)],
    ),  # fmt: skip
}


def distinct(p: Pattern) -> Pattern:
    return Pattern.build(p.name + "-d", [None if x < 0 else int(x) for x in p.vlabels],
                         [(int(a), int(b), None if e < 0 else int(e))
                          for (a, b), e in zip(p.edges, p.elabels, strict=True)], True)  # fmt: skip


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", sorted(FANS))
@pytest.mark.parametrize("as_distinct", [False, True])
def test_fan_outs_count_as_the_search(seed: int, name: str, as_distinct: bool) -> None:
    """Leaves alike under one parent are counted by a falling factorial of the parent's
    fitting neighbours: the same embeddings (and, for ``distinct``, subgraphs) as the
    search finds, in total and summed over slices of roots."""
    p = distinct(FANS[name]) if as_distinct else FANS[name]
    plan = tree_plan(p)
    assert plan is not None and not counts_by_tree(p)
    assert max(g for *_, g in plan.steps) > 1
    snap = snapshot(graph(seed, edges=1500))
    searched, _rows = snap.run(p, 0, snap.num_vertices, emit=True, limit=1)
    total, none = snap.run(p, 0, snap.num_vertices, emit=False)
    assert none.shape == (0, p.num_vertices)
    assert total == searched > 0
    cuts, _work = snap.slices(5)
    parts = [snap.run(p, int(lo), int(hi), emit=False)[0] for lo, hi in itertools.pairwise(cuts)]
    assert sum(parts) == total


def test_fan_out_counts_equal_brute_force() -> None:
    """CpuEngine.count_static of fan-outs on a tiny graph: networkx's count."""
    g = graph(5, edges=300)
    eng = CpuEngine()
    eng.load_graph(g)
    for name in ("fan3", "fan4-any-leaves", "path3-one-label", "fan2-and-one"):
        want = brute_force(g, FANS[name])
        assert want > 0 and eng.count_static(FANS[name]) == want, name


def test_trees_whose_other_vertices_may_collide_are_searched() -> None:
    """Two vertices that may share a data vertex and are not leaves alike of one parent
    (from any root) leave the pattern to the search; so does a distinct pattern whose
    automorphisms move every root."""
    assert tree_plan(path([1, 1, 1, 1])) is None  # its ends are three steps apart
    grandparent = Pattern.build("gp", [1, 0, 3, 1], [(0, 1, _), (0, 2, _), (1, 3, _)])
    assert tree_plan(grandparent) is None  # a leaf and its grandparent, from any root
    assert tree_plan(path([0, 1, 1])) is not None  # its label 1 vertices are adjacent
    assert tree_plan(star(0, [1, 1], [0, 1])) is None  # leaves alike but for the edge label
    spider = Pattern.build("spider", [0, 1, 1, 1], [(0, 1, _), (1, 2, _), (0, 3, _)])
    assert tree_plan(spider) is None
    edge = path([1, 1])
    assert tree_plan(edge) is not None  # adjacent vertices never share one
    assert tree_plan(distinct(edge)) is None  # its automorphism swaps the ends
    assert tree_plan(distinct(path([1, 1, 1]))).divisor == 2  # type: ignore[union-attr]
