"""Seeded synthetic workloads: a labelled power-law graph arriving as a stream of edge
insertions with deletions interleaved (the demo's and loadgen's default input).

Endpoints are drawn Chung-Lu style: vertex i has weight ``(i + 1) ** (-1 / (gamma - 1))``, so
degrees follow a power law with exponent ``gamma`` and a few hubs close many triangles.
Each step deletes a uniformly chosen live edge with probability ``delete_fraction`` (once
there is one), and otherwise inserts a new edge. Every update carries both endpoint labels.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dcsm.model import OP_DELETE, OP_INSERT, Graph, UpdateBatch


def powerlaw_stream(
    num_vertices: int,
    num_updates: int,
    num_labels: int = 3,
    seed: int = 7,
    delete_fraction: float = 0.1,
    gamma: float = 2.2,
) -> UpdateBatch:
    """``num_updates`` updates (seqs 0..) over vertices 0..num_vertices-1."""
    if num_vertices < 3:
        raise ValueError(f"num_vertices must be >= 3, got {num_vertices}")
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_labels, num_vertices).astype(np.int32)
    weights = (np.arange(num_vertices) + 1.0) ** (-1.0 / (gamma - 1.0))
    weights /= weights.sum()
    order = rng.permutation(num_vertices)  # hubs at random ids, not 0, 1, 2...
    live: list[tuple[int, int]] = []
    where: dict[tuple[int, int], int] = {}
    ops = np.empty(num_updates, np.int8)
    us = np.empty(num_updates, np.int64)
    vs = np.empty(num_updates, np.int64)
    pool: Iterator[tuple[int, int]] = iter(())
    deletes = rng.random(num_updates) < delete_fraction
    picks = rng.random(num_updates)
    for i in range(num_updates):
        if deletes[i] and live:
            j = int(picks[i] * len(live))
            edge = live[j]
            last = live.pop()
            if j < len(live):
                live[j] = last
                where[last] = j
            del where[edge]
            ops[i], (us[i], vs[i]) = OP_DELETE, edge
            continue
        while True:
            pair = next(pool, None)
            if pair is None:
                ends = order[rng.choice(num_vertices, size=(4096, 2), p=weights)]
                pool = iter([(a, b) for a, b in ends.tolist()])
                continue
            a, b = pair
            edge = (min(a, b), max(a, b))
            if a != b and edge not in where:
                break
        where[edge] = len(live)
        live.append(edge)
        ops[i], (us[i], vs[i]) = OP_INSERT, edge
    return UpdateBatch.from_arrays(ops, us, vs, u_label=labels[us], v_label=labels[vs])


def stream_from_graph(graph: Graph, seed: int = 7, delete_fraction: float = 0.1) -> UpdateBatch:
    """The graph's edges as insertions in a seeded random order, with a ``delete_fraction``
    share of them deleted again later (each deletion after its insertion)."""
    rng = np.random.default_rng(seed)
    ne = graph.num_edges
    perm = rng.permutation(ne)
    src, dst, lab = graph.src[perm], graph.dst[perm], graph.edge_labels[perm]
    k = int(ne * delete_fraction)
    victims = rng.choice(ne, size=k, replace=False)
    # Each deletion lands at a random position after its insertion.
    when = victims + 1 + (rng.random(k) * (ne - victims)).astype(np.int64)
    key = np.concatenate([np.arange(ne) * 2, when * 2 - 1])
    order = np.argsort(key, kind="stable")
    op = np.concatenate([np.full(ne, OP_INSERT, np.int8), np.full(k, OP_DELETE, np.int8)])[order]
    u = np.concatenate([src, src[victims]])[order]
    v = np.concatenate([dst, dst[victims]])[order]
    el = np.concatenate([lab, lab[victims]])[order]
    vlab = dict(zip(graph.vertex_ids.tolist(), graph.vertex_labels.tolist(), strict=True))
    ul = np.array([vlab.get(x, 0) for x in u.tolist()], np.int32)
    vl = np.array([vlab.get(x, 0) for x in v.tolist()], np.int32)
    return UpdateBatch.from_arrays(op, u, v, el, u_label=ul, v_label=vl)
