"""Per-query delta caps (``max_deltas``) on the CPU engine: at most the cap of rows per
update and query, the rest counted exactly in ``BatchResult.overflow``; checked against the
same engine without a cap, and :func:`cap_deltas` (the host-side cap) against the kernel's."""

from __future__ import annotations

from collections import Counter

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.interface import BatchResult, cap_deltas
from dcsm.model import Graph, Pattern, UpdateBatch

PATH4 = Pattern.build("p4", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None)])
TRIANGLE = Pattern.build("t", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
EDGE = Pattern.build("e", [None] * 2, [(0, 1, None)])


def _workload(seed: int = 7) -> tuple[Graph, UpdateBatch]:
    rng = np.random.default_rng(seed)
    nv = 40
    src, dst = rng.integers(0, nv, 200), rng.integers(0, nv, 200)
    graph = Graph(
        vertex_ids=np.arange(nv, dtype=np.int64), vertex_labels=np.zeros(nv, np.int32),
        src=src.astype(np.int64), dst=dst.astype(np.int64), edge_labels=np.zeros(200, np.int32),
    )  # fmt: skip
    n = 300
    op = np.where(rng.random(n) < 0.7, 1, -1)
    return graph, UpdateBatch.from_arrays(op, rng.integers(0, nv, n), rng.integers(0, nv, n))


def _engine(graph: Graph, caps: dict[int, int | None]) -> CpuEngine:
    e = CpuEngine(chunk=64)
    e.load_graph(graph)
    for qid, pattern in enumerate((PATH4, TRIANGLE, EDGE)):
        e.register(qid, pattern, from_seq=0, max_deltas=caps.get(qid))
    e.register(3, PATH4, from_seq=0, count_only=True, max_deltas=caps.get(3))
    return e


def _per_update(res: BatchResult) -> tuple[Counter, Counter]:
    rows = Counter(zip(res.deltas.query.tolist(), res.deltas.seq.tolist(), strict=True))
    over = Counter()
    for q, s, c in zip(res.overflow.query.tolist(), res.overflow.seq.tolist(),
                       res.overflow.count.tolist(), strict=True):  # fmt: skip
        over[(q, s)] += c
    return rows, over


def test_cap_ships_at_most_the_cap_and_counts_the_rest_exactly() -> None:
    graph, batch = _workload()
    full = _engine(graph, {}).apply(batch)
    caps = {0: 5, 1: 0, 2: 1, 3: 1}  # 3 is count-mode: a cap changes nothing there
    capped = _engine(graph, caps).apply(batch)
    np.testing.assert_array_equal(full.outcome, capped.outcome)
    for f in ("query", "seq", "sign", "count"):
        np.testing.assert_array_equal(getattr(full.counts, f), getattr(capped.counts, f))
    want, _ = _per_update(full)
    got, over = _per_update(capped)
    assert len(full.overflow) == 0
    assert sum(over.values()) > 0 and len(capped.deltas) < len(full.deltas)
    for key, total in want.items():
        cap = caps[key[0]]
        assert got[key] == min(cap, total), key
        assert got[key] + over[key] == total, key
    assert set(over) <= set(want) and all(c > 0 for c in over.values())
    # Shipped rows are real matches of that update, with its sign.
    full_rows = set(zip(full.deltas.query.tolist(), full.deltas.seq.tolist(),
                        full.deltas.sign.tolist(), map(tuple, full.deltas.match.tolist()),
                        strict=True))  # fmt: skip
    for row in zip(capped.deltas.query.tolist(), capped.deltas.seq.tolist(),
                   capped.deltas.sign.tolist(), map(tuple, capped.deltas.match.tolist()),
                   strict=True):  # fmt: skip
        assert row in full_rows
    # Overflow signs are the updates' own.
    op = dict(zip(batch.seq.tolist(), batch.op.tolist(), strict=True))
    for s, sign in zip(capped.overflow.seq.tolist(), capped.overflow.sign.tolist(), strict=True):
        assert sign == op[s]


def test_host_side_cap_agrees_with_the_kernel() -> None:
    graph, batch = _workload(seed=11)
    caps = {0: 3, 1: 2, 2: 0}
    kernel = _engine(graph, caps).apply(batch)
    host = cap_deltas(_engine(graph, {}).apply(batch), caps)
    assert _per_update(kernel)[1] == _per_update(host)[1]
    assert _per_update(kernel)[0] == _per_update(host)[0]
    # Applying it again to a capped result changes nothing.
    again = cap_deltas(kernel, caps)
    assert _per_update(again) == _per_update(kernel)
