"""The CPU engine on larger random graphs: the static/incremental identity, growth of the
adjacency pool far past its initial size, and several queries of different sizes at once.
Expectations come from networkx and plain Python sets."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import numpy as np
import pytest
from nx_reference import embeddings, engine_deltas, nx_graph, random_graph, replay

from dcsm.engine.cpu import CpuEngine
from dcsm.model import Graph, Pattern, UpdateBatch

TRIANGLE = Pattern.build("triangle", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
CYCLE4 = Pattern.build(
    "cycle4", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None)]
)
DIAMOND = Pattern.build(
    "diamond", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None), (0, 2, None)]
)
TAILED = Pattern.build(
    "tailed", [0, None, None, 1], [(0, 1, None), (1, 2, None), (0, 2, None), (2, 3, None)]
)
EDGE01 = Pattern.build("edge01", [0, 1], [(0, 1, None)])
PATH5 = Pattern.build("path5", [None] * 5, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 4, None)])
LABELLED_PATH5 = Pattern.build(
    "lpath5", [0, None, 1, None, 0], [(0, 1, None), (1, 2, None), (2, 3, None), (3, 4, None)]
)
PATTERNS = [TRIANGLE, CYCLE4, DIAMOND, TAILED, EDGE01, PATH5]


def random_stream(rng: np.random.Generator, graph: Graph, n: int, new: int = 20) -> UpdateBatch:
    """Mostly fresh pairs, a third of the updates on existing edges (deletions, duplicate
    inserts), new vertices; no self loops or labels (the property tests cover those)."""
    ids = np.concatenate([graph.vertex_ids, rng.choice(10**12, new) + 10**12])
    u = ids[rng.integers(0, len(ids), n)]
    v = ids[rng.integers(0, len(ids), n)]
    pick = rng.integers(0, graph.num_edges, n)
    old = rng.random(n) < 0.35
    u = np.where(old, graph.src[pick], u)
    v = np.where(old, graph.dst[pick], v)
    v = np.where(u == v, ids[0] if ids[0] != u[0] else ids[1], v)
    keep = u != v
    op = np.where(rng.random(n) < 0.6, 1, -1).astype(np.int8)
    return UpdateBatch.from_arrays(op[keep], u[keep], v[keep])


def final_graph(graph: Graph, stream: UpdateBatch) -> Graph:
    """Initial graph plus stream, with Python sets (all edge labels 0)."""
    edges = {frozenset(e) for e in zip(graph.src.tolist(), graph.dst.tolist(), strict=True)}
    for op, u, v in zip(stream.op.tolist(), stream.u.tolist(), stream.v.tolist(), strict=True):
        (edges.add if op > 0 else edges.discard)(frozenset((u, v)))
    pairs = np.array([sorted(e) for e in edges], np.int64).reshape(-1, 2)
    return Graph(graph.vertex_ids, graph.vertex_labels, pairs[:, 0], pairs[:, 1],
                 np.zeros(len(pairs), np.int32))  # fmt: skip


def edge_set(g: Graph) -> set[tuple[int, int]]:
    lo, hi = np.minimum(g.src, g.dst).tolist(), np.maximum(g.src, g.dst).tolist()
    return set(zip(lo, hi, strict=True))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_static_plus_deltas_is_final_static(seed: int) -> None:
    rng = np.random.default_rng(seed)
    graph = random_graph(rng, 400, 3000, labels=2)
    stream = random_stream(rng, graph, 6000)
    engine = CpuEngine()
    engine.load_graph(graph)
    before = [engine.count_static(p) for p in PATTERNS]
    for q, p in enumerate(PATTERNS):
        engine.register(q, p, from_seq=0, count_only=True)
    pos, neg = np.zeros(len(PATTERNS), np.int64), np.zeros(len(PATTERNS), np.int64)
    for i in range(0, len(stream), 1000):
        c = engine.apply(stream.slice(i, i + 1000)).counts
        np.add.at(pos, c.query[c.sign > 0], c.count[c.sign > 0])
        np.add.at(neg, c.query[c.sign < 0], c.count[c.sign < 0])
    fresh = CpuEngine()
    final = final_graph(graph, stream)
    fresh.load_graph(final)
    after = [fresh.count_static(p) for p in PATTERNS]
    assert (np.array(before) + pos - neg).tolist() == after
    assert (pos > 0).all() and (neg > 0).all()
    # ... and the final static counts are networkx's (triangles: 6 embeddings each).
    g = nx_graph(final)
    assert after[0] == 2 * sum(nx.triangles(g).values())
    mixed = [(a, b) for a, b in g.edges if {g.nodes[a]["label"], g.nodes[b]["label"]} == {0, 1}]
    assert after[4] == len(mixed)  # a 0-1 edge matches edge01 one way round only


def test_static_counts_equal_networkx_on_a_small_graph() -> None:
    graph = random_graph(np.random.default_rng(7), 40, 160, labels=2)
    engine = CpuEngine()
    engine.load_graph(graph)
    g = nx_graph(graph)
    for p in PATTERNS:
        want = embeddings(g, p)
        assert engine.count_static(p) == len(want), p.name
        assert Counter(map(tuple, engine.match_static(p).tolist())) == Counter(want), p.name


@pytest.mark.parametrize("batch", [1 << 20, 777])
def test_pool_grows_from_an_empty_graph(batch: int) -> None:
    """40,000 insertions (duplicates included) and some deletions into an engine that starts
    empty: the neighbour pool must grow and be compacted many times without losing edges."""
    rng = np.random.default_rng(11)
    n = 40_000
    u = rng.integers(0, 600, n) * 1_000_003
    v = rng.integers(0, 600, n) * 1_000_003
    op = np.where(rng.random(n) < 0.85, 1, -1).astype(np.int8)
    keep = u != v
    stream = UpdateBatch.from_arrays(op[keep], u[keep], v[keep])
    engine = CpuEngine(chunk=128)
    engine.load_graph(Graph.empty())
    engine.register(0, TRIANGLE, from_seq=0, count_only=True)
    pos = neg = 0
    for i in range(0, len(stream), batch):
        c = engine.apply(stream.slice(i, i + batch)).counts
        pos += int(c.count[c.sign > 0].sum())
        neg += int(c.count[c.sign < 0].sum())
    final = final_graph(Graph.empty(), stream)
    got = engine.export_graph()
    assert edge_set(got) == edge_set(final)
    triangles = sum(nx.triangles(nx_graph(final)).values()) // 3
    assert pos - neg == 6 * triangles == engine.count_static(TRIANGLE)


def test_queries_of_different_sizes_share_an_engine() -> None:
    """Embedding-mode queries with 2, 3, 4 and 5 vertices registered together: each gets
    exactly its own deltas, rows padded with -1 past its vertex count."""
    rng = np.random.default_rng(5)
    graph = random_graph(rng, 24, 60, labels=2)
    stream = random_stream(rng, graph, 100, new=3)
    patterns = [EDGE01, TRIANGLE, DIAMOND, LABELLED_PATH5]
    _, expected = replay(graph, stream, patterns)
    engine = CpuEngine()
    engine.load_graph(graph)
    for q, p in enumerate(patterns):
        engine.register(q, p, from_seq=0)
    results = [engine.apply(stream.slice(i, i + 40)) for i in range(0, len(stream), 40)]
    for q, p in enumerate(patterns):
        assert engine_deltas(results, q, p.num_vertices) == expected[q], p.name
        assert expected[q].total() > 0, p.name
