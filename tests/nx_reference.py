"""Brute-force reference semantics on networkx: the independent oracle of the engine tests.

Nothing here uses dcsm's planner, engines or readers. :class:`ReferenceGraph` re-implements
the update rules of :mod:`dcsm.engine.interface` in plain Python (an edge is its unordered
endpoint pair, its label fixed at insertion; self loops and vertex-label conflicts reject the
update; inserting an existing edge / deleting a missing one is a no-op; a vertex first seen
without a label gets label 0) and finds matches with networkx's VF2 monomorphism search:
``GraphMatcher(data, pattern).subgraph_monomorphisms_iter()`` enumerates exactly the
edge-induced embeddings, and a pattern label of None is a wildcard.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from dcsm.model import (
    OUTCOME_APPLIED,
    OUTCOME_LABEL_CONFLICT,
    OUTCOME_NOOP,
    OUTCOME_SELF_LOOP,
    Graph,
    Pattern,
    UpdateBatch,
)

Embedding = tuple[int, ...]  # data vertex of query vertex 0, 1, ...
Delta = tuple[int, int, Embedding]  # (seq, sign, embedding)


def _compatible(data: dict, pattern: dict) -> bool:
    want = pattern.get("label")
    return want is None or data.get("label") == want


def pattern_graph(pattern: Pattern) -> nx.Graph:
    """The pattern as networkx graph, read straight from its arrays (-1 -> None)."""
    g = nx.Graph()
    for i, lab in enumerate(pattern.vlabels.tolist()):
        g.add_node(i, label=None if lab < 0 else lab)
    for (u, v), lab in zip(pattern.edges.tolist(), pattern.elabels.tolist(), strict=True):
        g.add_edge(u, v, label=None if lab < 0 else lab)
    return g


def embeddings(data: nx.Graph, pattern: Pattern) -> list[Embedding]:
    """Every embedding of ``pattern`` in ``data`` (edge-induced, injective, labels equal
    where the pattern has one)."""
    p = pattern_graph(pattern)
    gm = GraphMatcher(data, p, node_match=_compatible, edge_match=_compatible)
    n = pattern.num_vertices
    out = []
    for m in gm.subgraph_monomorphisms_iter():
        inv = {q: d for d, q in m.items()}
        out.append(tuple(inv[i] for i in range(n)))
    return out


def image(emb: Embedding, pattern: Pattern) -> frozenset[frozenset[int]]:
    """The data edges an embedding covers: what identifies a matching subgraph."""
    return frozenset(frozenset((emb[u], emb[v])) for u, v in pattern.edges.tolist())


def uses_edge(emb: Embedding, pattern: Pattern, a: int, b: int) -> bool:
    """Does some pattern edge land on data edge {a, b}?"""
    return frozenset((a, b)) in image(emb, pattern)


def distinct(embs: Iterable[Embedding], pattern: Pattern) -> set[frozenset[frozenset[int]]]:
    return {image(e, pattern) for e in embs}


def nx_graph(graph: Graph) -> nx.Graph:
    """A dcsm Graph as networkx graph with the engine's loading rules (edges to undeclared
    vertices create them with label 0; a repeated pair keeps its first label)."""
    g = nx.Graph()
    for x, lab in zip(graph.vertex_ids.tolist(), graph.vertex_labels.tolist(), strict=True):
        g.add_node(x, label=lab)
    for a, b, lab in zip(
        graph.src.tolist(), graph.dst.tolist(), graph.edge_labels.tolist(), strict=True
    ):
        if a == b:
            continue
        for x in (a, b):
            if x not in g:
                g.add_node(x, label=0)
        if not g.has_edge(a, b):
            g.add_edge(a, b, label=lab)
    return g


class ReferenceGraph:
    """A data graph under updates, one at a time, with the documented semantics."""

    def __init__(self, graph: Graph) -> None:
        self.g = nx_graph(graph)

    def apply(self, op: int, u: int, v: int, label: int, u_label: int, v_label: int) -> int:
        """Apply one update; returns its OUTCOME_* code."""
        g = self.g
        if u == v:
            return OUTCOME_SELF_LOOP
        for x, lab in ((u, u_label), (v, v_label)):
            if lab >= 0 and x in g and g.nodes[x]["label"] != lab:
                return OUTCOME_LABEL_CONFLICT
        if op > 0:
            if g.has_edge(u, v):
                return OUTCOME_NOOP
            for x, lab in ((u, u_label), (v, v_label)):
                if x not in g:
                    g.add_node(x, label=max(lab, 0))
            g.add_edge(u, v, label=label)
            return OUTCOME_APPLIED
        if not g.has_edge(u, v):
            return OUTCOME_NOOP
        g.remove_edge(u, v)
        return OUTCOME_APPLIED


def replay(
    graph: Graph, stream: UpdateBatch, patterns: list[Pattern]
) -> tuple[list[int], list[Counter[Delta]]]:
    """Apply ``stream`` one update at a time; returns the outcomes and, per pattern, the
    multiset of (seq, sign, embedding) deltas: after an insertion, the embeddings that use
    the new edge; before a deletion, those that use the deleted edge."""
    ref = ReferenceGraph(graph)
    current = [embeddings(ref.g, p) for p in patterns]
    outcomes: list[int] = []
    deltas: list[Counter[Delta]] = [Counter() for _ in patterns]
    cols = zip(
        stream.seq.tolist(), stream.op.tolist(), stream.u.tolist(), stream.v.tolist(),
        stream.label.tolist(), stream.u_label.tolist(), stream.v_label.tolist(), strict=True,
    )  # fmt: skip
    for seq, op, u, v, lab, ul, vl in cols:
        outcome = ref.apply(op, u, v, lab, ul, vl)
        outcomes.append(outcome)
        if outcome != OUTCOME_APPLIED:
            continue
        for k, p in enumerate(patterns):
            after = embeddings(ref.g, p)
            touched = after if op > 0 else current[k]
            for e in touched:
                if uses_edge(e, p, u, v):
                    deltas[k][(seq, op, e)] += 1
            current[k] = after
    return outcomes, deltas


def engine_deltas(results: Iterable, qid: int, width: int) -> Counter[Delta]:
    """The (seq, sign, embedding) multiset one query got from a list of BatchResults."""
    out: Counter[Delta] = Counter()
    for r in results:
        d = r.deltas
        keep = d.query == qid
        for seq, sign, row in zip(
            d.seq[keep].tolist(), d.sign[keep].tolist(), d.match[keep].tolist(), strict=True
        ):
            assert all(x == -1 for x in row[width:]), f"padding of a {width}-vertex match: {row}"
            out[(seq, sign, tuple(row[:width]))] += 1
    return out


def engine_counts(results: Iterable, qid: int) -> Counter[tuple[int, int]]:
    """(seq, sign) -> count for one count-mode query."""
    out: Counter[tuple[int, int]] = Counter()
    for r in results:
        c = r.counts
        keep = c.query == qid
        for seq, sign, n in zip(
            c.seq[keep].tolist(), c.sign[keep].tolist(), c.count[keep].tolist(), strict=True
        ):
            assert n > 0, "count rows are only reported for non-zero counts"
            out[(seq, sign)] += n
    return out


def per_update(deltas: Counter[Delta]) -> Counter[tuple[int, int]]:
    out: Counter[tuple[int, int]] = Counter()
    for (seq, sign, _), n in deltas.items():
        out[(seq, sign)] += n
    return out


def random_graph(rng: np.random.Generator, nv: int, ne: int, labels: int = 1) -> Graph:
    """A random simple graph on ``nv`` scattered external ids with ``ne`` distinct edges
    (fewer if the graph is too small), random vertex labels, edge labels 0."""
    ids = np.sort(rng.choice(10**12, size=nv, replace=False)).astype(np.int64)[::-1].copy()
    pairs: set[tuple[int, int]] = set()
    ne = min(ne, nv * (nv - 1) // 2)
    while len(pairs) < ne:
        a, b = rng.integers(0, nv, 2).tolist()
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    p = np.array(sorted(pairs), np.int64).reshape(-1, 2)
    return Graph(
        vertex_ids=ids,
        vertex_labels=rng.integers(0, labels, nv).astype(np.int32),
        src=ids[p[:, 0]],
        dst=ids[p[:, 1]],
        edge_labels=np.zeros(len(p), np.int32),
    )
