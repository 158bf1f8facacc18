"""Seeded workloads: synthetic power-law graphs and DCSM-protocol update streams.

DCSM protocol
-------------
The DCSM paper builds its dynamic workloads from a static graph with ``|E|`` edges like this
(and the shared ``enron`` workloads were built the same way, which fixes the details):

1. a random ``floor(0.45 |E|)`` of the edges are held out of the initial graph and arrive as
   insertions, in random order;
2. a random ``floor(0.05 |E|)`` of the edges that *stay* in the initial graph are deleted
   (so roughly 9% of the initial graph's edges; each at most once, and never an edge that
   the stream inserts);
3. insertions and deletions are interleaved uniformly at random.

Every vertex of the input graph is declared in the initial graph, including those whose
edges are all held out, so vertex labels are known before any update refers to them.

Randomness comes from one ``numpy.random.SeedSequence(seed)`` spawned into independent
streams (split, deletions, interleaving, labels, timestamps): adding ``labels`` or ``rate``
changes neither which edges are held out nor the order of the stream, so a labelled and an
unlabelled workload from one seed share their stream (as enron ``labeled5``/``unlabeled`` do).

Synthetic graphs
----------------
:func:`powerlaw_graph` grows a Holme-Kim graph: preferential attachment (Barabasi-Albert)
with a triad-formation step that closes triangles with probability ``triangle_prob``, so the
degree distribution is a power law and the graph holds enough triangles, cliques and cycles
for the usual query patterns to have matches. It uses numpy's seeded generator only, so a
seed gives the same graph with any networkx version.

References: Sun et al., "Inter-batch parallel continuous subgraph matching" (DCSM), section 6;
Holme & Kim, "Growing scale-free networks with tunable clustering", Phys. Rev. E 65, 2002.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dcsm.arrays import unique_sorted
from dcsm.errors import DcsmError
from dcsm.model import OP_DELETE, OP_INSERT, Graph, UpdateBatch

INSERT_FRACTION = 0.45
DELETE_FRACTION = 0.05


# Below this (updates/s) arrival times leave the range a stream file writes sensibly (1e-320
# made them inf, 1e-300 numbers of 300 digits).
MIN_RATE = 1e-6


class WorkloadError(DcsmError):
    """Parameters that cannot produce a workload (reported as one line by the CLI)."""


@dataclass(frozen=True)
class Workload:
    """An initial graph and the update stream to replay on it (seqs 0..n-1; ``ts`` in
    seconds since the start of the stream when a rate was given, else 0)."""

    initial: Graph
    stream: UpdateBatch

    @property
    def num_insertions(self) -> int:
        return int((self.stream.op == OP_INSERT).sum())

    @property
    def num_deletions(self) -> int:
        return int((self.stream.op == OP_DELETE).sum())


def _rngs(seed: int, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


def _share(fraction: float, total: int) -> int:
    # The epsilon keeps e.g. 0.45 * 100 = 45.000000000000004 and 0.05 * 20 = 1.0 exact.
    return int(math.floor(fraction * total + 1e-9))


def dcsm_workload(
    graph: Graph,
    *,
    insert_fraction: float = INSERT_FRACTION,
    delete_fraction: float = DELETE_FRACTION,
    labels: int | None = None,
    rate: float | None = None,
    seed: int = 0,
) -> Workload:
    """Split ``graph`` into an initial graph and a stream by the DCSM protocol.

    Args:
        graph: the full graph (each undirected edge once).
        insert_fraction: share of ``|E|`` held out and inserted by the stream.
        delete_fraction: share of ``|E|`` deleted from the initial graph by the stream.
        labels: replace every vertex label with a uniform random one in ``0..labels-1``;
            None keeps the graph's labels.
        rate: give updates arrival times with exponential inter-arrival times at ``rate``
            updates per second (``ts`` column); None leaves ``ts`` at 0.
        seed: seed of every random choice.
    """
    if not 0 <= insert_fraction <= 1:
        raise WorkloadError(f"insert fraction {insert_fraction} is outside [0, 1]")
    if not 0 <= delete_fraction <= 1:
        raise WorkloadError(f"delete fraction {delete_fraction} is outside [0, 1]")
    if labels is not None and labels < 1:
        raise WorkloadError(f"labels must be >= 1, got {labels}")
    if rate is not None and not (math.isfinite(rate) and rate >= MIN_RATE):
        raise WorkloadError(f"rate must be at least {MIN_RATE:g} updates/s, got {rate}")
    split_rng, del_rng, mix_rng, label_rng, ts_rng = _rngs(seed, 5)

    ne = graph.num_edges
    n_ins = _share(insert_fraction, ne)
    n_del = _share(delete_fraction, ne)
    if n_ins + n_del > ne:
        raise WorkloadError(
            f"cannot insert {n_ins} and delete {n_del} of {ne} edges: the deletions must come "
            f"from the {ne - n_ins} edges left in the initial graph"
        )
    perm = split_rng.permutation(ne)
    held = perm[:n_ins]  # insertion order = this random order
    kept = np.sort(perm[n_ins:])  # the initial graph keeps the input's edge order
    deleted = del_rng.permutation(kept)[:n_del]  # deletion order = random

    # Interleave: choose which stream positions are deletions, uniformly.
    n = n_ins + n_del
    is_del = np.zeros(n, bool)
    is_del[mix_rng.choice(n, size=n_del, replace=False)] = True
    edge = np.empty(n, np.int64)
    edge[~is_del] = held
    edge[is_del] = deleted
    op = np.where(is_del, OP_DELETE, OP_INSERT).astype(np.int8)

    vlabels = graph.vertex_labels
    if labels is not None:
        vlabels = label_rng.integers(0, labels, graph.num_vertices).astype(np.int32)
    ts = None
    if rate is not None:
        ts = np.cumsum(ts_rng.exponential(1.0 / rate, n))
    initial = Graph(
        vertex_ids=graph.vertex_ids.copy(),
        vertex_labels=np.asarray(vlabels, np.int32).copy(),
        src=graph.src[kept],
        dst=graph.dst[kept],
        edge_labels=graph.edge_labels[kept],
    )
    stream = UpdateBatch.from_arrays(
        op, graph.src[edge], graph.dst[edge], graph.edge_labels[edge], ts=ts
    )
    return Workload(initial=initial, stream=stream)


class _Uniforms:
    """Pre-drawn uniform floats handed out one at a time (one numpy call per block
    instead of one per draw, which dominates the pure-Python growth loop otherwise)."""

    def __init__(self, rng: np.random.Generator, block: int = 1 << 16) -> None:
        self._rng = rng
        self._block = block
        self._buf: list[float] = []
        self._i = 0

    def __call__(self) -> float:
        if self._i == len(self._buf):
            self._buf = self._rng.random(self._block).tolist()
            self._i = 0
        x = self._buf[self._i]
        self._i += 1
        return x


def powerlaw_graph(
    vertices: int,
    edges_per_vertex: int,
    *,
    triangle_prob: float = 0.5,
    labels: int = 1,
    seed: int = 0,
) -> Graph:
    """A seeded Holme-Kim power-law graph (see module docstring).

    Vertices are ``0..vertices-1``; vertex ``t >= edges_per_vertex`` arrives with
    ``edges_per_vertex`` edges to distinct earlier vertices: the first by preferential
    attachment, each further one with probability ``triangle_prob`` to a random neighbour
    of the previous target (closing a triangle), else again by preferential attachment.
    Labels are uniform in ``0..labels-1``; edge labels are 0.
    """
    m = edges_per_vertex
    if m < 1:
        raise WorkloadError(f"edges per vertex must be >= 1, got {m}")
    if vertices <= m:
        raise WorkloadError(f"need more vertices ({vertices}) than edges per vertex ({m})")
    if not 0 <= triangle_prob <= 1:
        raise WorkloadError(f"triangle probability {triangle_prob} is outside [0, 1]")
    if labels < 1:
        raise WorkloadError(f"labels must be >= 1, got {labels}")
    graph_rng, label_rng = _rngs(seed, 2)
    uniform = _Uniforms(graph_rng)
    adj: list[list[int]] = [[] for _ in range(vertices)]
    # Every edge endpoint once: a uniform pick from it is a degree-proportional pick.
    ends: list[int] = []
    src: list[int] = []
    dst: list[int] = []

    def attach_preferential(chosen: set[int], t: int) -> int:
        while True:
            x = ends[int(uniform() * len(ends))] if ends else int(uniform() * t)
            if x not in chosen:
                return x

    for t in range(m, vertices):
        chosen: set[int] = set()
        last = -1
        for k in range(m):
            target = -1
            if k > 0 and uniform() < triangle_prob:
                # A random neighbour of the previous target; a few tries instead of
                # filtering the whole list keeps hubs cheap.
                nbrs = adj[last]
                for _ in range(4):
                    y = nbrs[int(uniform() * len(nbrs))] if nbrs else -1
                    if y >= 0 and y not in chosen:
                        target = y
                        break
            if target < 0:
                if t == m and not ends:  # the seed vertices 0..m-1 have no edges yet
                    target = k
                else:
                    target = attach_preferential(chosen, t)
            chosen.add(target)
            last = target
        for x in sorted(chosen):
            adj[x].append(t)
            adj[t].append(x)
            ends += (x, t)
            src.append(x)
            dst.append(t)
    return Graph(
        vertex_ids=np.arange(vertices, dtype=np.int64),
        vertex_labels=label_rng.integers(0, labels, vertices).astype(np.int32),
        src=np.array(src, np.int64),
        dst=np.array(dst, np.int64),
        edge_labels=np.zeros(len(src), np.int32),
    )


#: A LiveJournal-sized preset (4.8M vertices, ~43M undirected edges; gamma as measured for
#: social graphs): ``dcsm gen-graph --preset livejournal``.
PRESETS = {"livejournal": {"edges": 43_000_000, "vertices": 4_800_000, "gamma": 2.3}}


def chunglu_graph(
    edges: int,
    vertices: int | None = None,
    *,
    gamma: float = 2.3,
    labels: int = 1,
    edge_labels: int = 1,
    seed: int = 0,
) -> Graph:
    """A seeded Chung-Lu power-law graph of exactly ``edges`` distinct edges, vectorised.

    Vertex i (ids shuffled) has weight ``(i + 1) ** (-1 / (gamma - 1))``; both endpoints of
    an edge are drawn in proportion to weight, self loops and repeats are dropped and more
    pairs drawn until ``edges`` remain (then a uniform subset of them). ``vertices``
    defaults to ``edges // 9`` (LiveJournal's ratio). Labels are uniform in ``0..labels-1``
    (vertices) and ``0..edge_labels-1`` (edges). Numpy only: tens of millions of edges take
    seconds to a minute, memory a few times the edge arrays.
    """
    nv = max(3, edges // 9) if vertices is None else vertices
    if edges < 1:
        raise WorkloadError(f"edges must be >= 1, got {edges}")
    if nv < 3 or edges > nv * (nv - 1) // 4:
        raise WorkloadError(f"{edges} edges do not fit a sparse graph of {nv} vertices")
    if not gamma > 2:
        raise WorkloadError(f"gamma must be > 2, got {gamma}")
    if labels < 1 or edge_labels < 1:
        raise WorkloadError("labels and edge labels must be >= 1")
    graph_rng, label_rng = _rngs(seed, 2)
    cdf = np.cumsum((np.arange(nv) + 1.0) ** (-1.0 / (gamma - 1.0)))
    cdf /= cdf[-1]
    ids = graph_rng.permutation(nv).astype(np.int64)  # hubs at random ids
    keys = np.zeros(0, np.int64)
    while len(keys) < edges:
        want = int((edges - len(keys)) * 1.15) + 1024
        a = ids[np.searchsorted(cdf, graph_rng.random(want), side="right").clip(0, nv - 1)]
        b = ids[np.searchsorted(cdf, graph_rng.random(want), side="right").clip(0, nv - 1)]
        keep = a != b
        lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        keys = unique_sorted(np.concatenate([keys, lo * nv + hi]))
    keys = keys[np.sort(graph_rng.choice(len(keys), edges, replace=False))]
    return Graph(
        vertex_ids=np.arange(nv, dtype=np.int64),
        vertex_labels=label_rng.integers(0, labels, nv).astype(np.int32),
        src=keys // nv,
        dst=keys % nv,
        edge_labels=label_rng.integers(0, edge_labels, edges).astype(np.int32),
    )
