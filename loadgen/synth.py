"""Seeded synthetic workloads: a labelled power-law graph arriving as a stream of edge
insertions with deletions interleaved (the demo's and loadgen's default input).

Endpoints are drawn Chung-Lu style: vertex i has weight ``(i + 1) ** (-1 / (gamma - 1))``, so
degrees follow a power law with exponent ``gamma`` and a few hubs close many triangles.
Each step deletes a uniformly chosen live edge with probability ``delete_fraction`` (once
there is one), and otherwise inserts a new edge. Every update carries both endpoint labels.
The per-update loop is numba-compiled (a sweep at 1M updates/s needs millions of updates).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

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
    ops = np.empty(num_updates, np.int8)
    us = np.empty(num_updates, np.int64)
    vs = np.empty(num_updates, np.int64)
    deletes = rng.random(num_updates) < delete_fraction
    picks = rng.random(num_updates)
    # The live edges (a swap-remove array) and where each one sits, keyed lo * nv + hi.
    live = np.empty((num_updates, 2), np.int64)
    where = Dict.empty(key_type=types.int64, value_type=types.int64)
    pool = np.empty((0, 2), np.int64)
    i = nlive = p = 0
    pairs = num_vertices * (num_vertices - 1) // 2
    while True:
        start = i
        i, nlive, p = _generate(ops, us, vs, deletes, picks, i, live, nlive, where, pool, p,
                                num_vertices)  # fmt: skip
        if i == num_updates:
            break
        if nlive == pairs:  # every pair is an edge: update i can only delete one
            deletes[i] = True
            continue
        # Endpoint pairs run out: the next 4096 (the kernel resumes at i), drawn by weight;
        # uniformly once a whole pool by weight found no free pair (a nearly complete small
        # graph, whose last free pairs join light vertices, would otherwise take forever).
        if i == start and len(pool):
            pool = rng.integers(0, num_vertices, size=(4096, 2))
        else:
            pool = order[rng.choice(num_vertices, size=(4096, 2), p=weights)].astype(np.int64)
        p = 0
    return UpdateBatch.from_arrays(ops, us, vs, u_label=labels[us], v_label=labels[vs])


@njit(cache=True, nogil=True)
def _generate(
    ops: np.ndarray,
    us: np.ndarray,
    vs: np.ndarray,
    deletes: np.ndarray,
    picks: np.ndarray,
    i: int,
    live: np.ndarray,
    nlive: int,
    where: Dict,
    pool: np.ndarray,
    p: int,
    nv: int,
) -> tuple[int, int, int]:
    """Fill updates i.. until done or ``pool`` (int64 (k, 2) endpoint pairs, next at ``p``)
    runs out; returns (next update, live edges, next pair). Update k deletes a live edge
    (chosen by ``picks[k]``) when ``deletes[k]`` and one exists, else inserts the next pair
    that is no self loop and not live."""
    n = ops.shape[0]
    while i < n:
        if deletes[i] and nlive > 0:
            j = int(picks[i] * nlive)
            a, b = live[j, 0], live[j, 1]
            nlive -= 1
            if j < nlive:
                live[j, 0], live[j, 1] = live[nlive, 0], live[nlive, 1]
                where[live[j, 0] * nv + live[j, 1]] = j
            del where[a * nv + b]
            ops[i], us[i], vs[i] = OP_DELETE, a, b
            i += 1
            continue
        found = False
        lo = hi = 0
        while p < pool.shape[0]:
            a, b = pool[p, 0], pool[p, 1]
            p += 1
            lo, hi = min(a, b), max(a, b)
            if a != b and lo * nv + hi not in where:
                found = True
                break
        if not found:
            return i, nlive, p
        where[lo * nv + hi] = nlive
        live[nlive, 0], live[nlive, 1] = lo, hi
        nlive += 1
        ops[i], us[i], vs[i] = OP_INSERT, lo, hi
        i += 1
    return i, nlive, p


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
