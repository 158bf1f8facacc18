"""Random graphs and streams, and the CPU-vs-GPU comparison every GPU test uses."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.interface import BatchResult, Engine
from dcsm.model import Graph, Pattern, UpdateBatch

TRIANGLE = Pattern.build("tri", [None, None, None], [(0, 1, None), (1, 2, None), (0, 2, None)])
LABELLED_TRIANGLE = Pattern.build("ltri", [0, 1, None], [(0, 1, None), (1, 2, 0), (0, 2, None)])
SQUARE = Pattern.build("sq", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None)])
PATH3 = Pattern.build("p3", [1, None, 0], [(0, 1, None), (1, 2, None)])
EDGE = Pattern.build("edge", [0, 1], [(0, 1, None)])
DIAMOND_DISTINCT = Pattern.build(
    "dia", [None] * 4, [(0, 1, None), (1, 2, None), (2, 0, None), (2, 3, None), (3, 0, None)], True
)
HOUSE = Pattern.build(
    "house", [None] * 5,
    [(0, 1, None), (1, 2, None), (2, 3, None), (3, 0, None), (0, 4, None), (1, 4, None)],
)  # fmt: skip
PATTERNS = [TRIANGLE, LABELLED_TRIANGLE, SQUARE, PATH3, EDGE, DIAMOND_DISTINCT, HOUSE]


def random_graph(rng: np.random.Generator, nv: int, ne: int, labels: int = 2) -> Graph:
    ids = rng.choice(10**12, size=nv, replace=False).astype(np.int64)
    s = rng.integers(0, nv, ne)
    d = rng.integers(0, nv, ne)
    keep = s != d
    return Graph(
        vertex_ids=ids,
        vertex_labels=rng.integers(0, labels, nv).astype(np.int32),
        src=ids[s[keep]],
        dst=ids[d[keep]],
        edge_labels=rng.integers(0, 2, int(keep.sum())).astype(np.int32),
    )


def random_stream(rng: np.random.Generator, g: Graph, n: int, new_vertices: int = 5) -> UpdateBatch:
    """Inserts, deletes of existing and missing edges, duplicates, re-inserts, self loops,
    label conflicts and new vertices, all mixed."""
    ids = np.concatenate([g.vertex_ids, rng.choice(10**12, new_vertices) + 10**12])
    pool_u = ids[rng.integers(0, len(ids), n)]
    pool_v = ids[rng.integers(0, len(ids), n)]
    # Half of the updates touch existing edges, so deletions and duplicates are frequent.
    pick = rng.integers(0, max(1, g.num_edges), n)
    touch = rng.random(n) < 0.5
    if g.num_edges:
        pool_u = np.where(touch, g.src[pick], pool_u)
        pool_v = np.where(touch, g.dst[pick], pool_v)
    op = np.where(rng.random(n) < 0.6, 1, -1).astype(np.int8)
    ul = np.where(rng.random(n) < 0.1, rng.integers(0, 2, n), -1).astype(np.int32)
    return UpdateBatch.from_arrays(op, pool_u, pool_v, rng.integers(0, 2, n), u_label=ul)


def growing_workload(seed: int = 14) -> tuple[Graph, UpdateBatch]:
    """A graph of 100 vertices and a stream of 24,000 updates (85 % insertions) among those
    and 2,000 new vertices: the graph grows some twentyfold (the pools' growth test)."""
    rng = np.random.default_rng(seed)
    g = random_graph(rng, nv=100, ne=300)
    n = 24_000
    ids = np.concatenate([g.vertex_ids, np.arange(2000) + 5 * 10**6])
    u, v = ids[rng.integers(0, len(ids), n)], ids[rng.integers(0, len(ids), n)]
    op = np.where(rng.random(n) < 0.85, 1, -1).astype(np.int8)
    return g, UpdateBatch.from_arrays(op, u, v)


def edge_set(g: Graph) -> set[tuple[int, int]]:
    """The graph's edges as (smaller id, larger id) pairs, labels left out."""
    lo, hi = np.minimum(g.src, g.dst).tolist(), np.maximum(g.src, g.dst).tolist()
    return set(zip(lo, hi, strict=True))


def run(engine: Engine, g: Graph, stream: UpdateBatch, patterns: list[Pattern], count_only: bool,
        chunk: int, before_close: Callable[[Engine], None] | None = None,
        ) -> list[BatchResult]:  # fmt: skip
    """Load g, register the patterns, apply the stream `chunk` updates per call; then
    `before_close(engine)`, if given, and close."""
    try:
        engine.load_graph(g)
        for q, p in enumerate(patterns):
            engine.register(q, p, from_seq=0, count_only=count_only)
        out = [engine.apply(stream.slice(i, i + chunk)) for i in range(0, len(stream), chunk)]
        if before_close is not None:
            before_close(engine)
        return out
    finally:
        engine.close()


def canonical(results: list[BatchResult]) -> dict[str, np.ndarray]:
    """Order-free view of a run: outcomes, sorted delta rows, sorted count rows."""
    d = [r.deltas for r in results]
    rows = np.concatenate(
        [np.column_stack([x.seq, x.query, x.sign, x.match]) for x in d if len(x)]
        or [np.zeros((0, 3))]
    )
    rows = rows[np.lexsort(rows.T[::-1])] if len(rows) else rows
    c = [r.counts for r in results]
    crow = np.concatenate(
        [np.column_stack([x.seq, x.query, x.sign, x.count]) for x in c if len(x)]
        or [np.zeros((0, 4))]
    )
    crow = crow[np.lexsort(crow.T[::-1])] if len(crow) else crow
    return {
        "outcome": np.concatenate([r.outcome for r in results]),
        "deltas": rows,
        "counts": crow,
    }


def assert_same(gpu: list[BatchResult], cpu: list[BatchResult]) -> None:
    a, b = canonical(gpu), canonical(cpu)
    # Two empty results agree on nothing worth a test: a workload must produce matches.
    assert len(b["deltas"]) or len(b["counts"]), "both sides empty: the test compares nothing"
    np.testing.assert_array_equal(a["outcome"], b["outcome"])
    assert a["deltas"].shape == b["deltas"].shape, (a["deltas"].shape, b["deltas"].shape)
    np.testing.assert_array_equal(a["deltas"], b["deltas"])
    np.testing.assert_array_equal(a["counts"], b["counts"])


def cpu_run(
    g: Graph, stream: UpdateBatch, patterns: list[Pattern], count_only: bool
) -> list[BatchResult]:
    return run(CpuEngine(), g, stream, patterns, count_only, len(stream) or 1)
