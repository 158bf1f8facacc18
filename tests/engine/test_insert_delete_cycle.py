"""bench/gpu_bench.py's sustained-rate stream: a stream of insertions, then their deletions in
reverse order, and again. Replayed on the CPU engine: every update applies, each deletion
pass ends every match its insertion pass made, and the graph comes back to where it began."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.model import OP_DELETE, OP_INSERT, OUTCOME_APPLIED, Graph, UpdateBatch
from tests.helpers import TRI, bench_script

VERTICES = 60


def graph_of(edges: np.ndarray) -> Graph:
    ids = np.arange(VERTICES, dtype=np.int64)
    no_labels = np.zeros(len(edges), np.int32)
    return Graph(
        ids, np.zeros(VERTICES, np.int32), edges[:, 0].copy(), edges[:, 1].copy(), no_labels
    )


def edge_set(g: Graph) -> set[tuple[int, int]]:
    return {(min(a, b), max(a, b)) for a, b in zip(g.src.tolist(), g.dst.tolist(), strict=True)}


def test_cycle_applies_every_update_and_returns_the_graph() -> None:
    cycle_of = bench_script("gpu_bench").insert_delete_cycle
    rng = np.random.default_rng(3)
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, VERTICES, (400, 2)) if a < b}
    edges = np.array(sorted(pairs), np.int64)
    rng.shuffle(edges)
    start, new = edges[:150], edges[150:]
    inserts = UpdateBatch.from_arrays(np.full(len(new), OP_INSERT), new[:, 0], new[:, 1])
    k = len(new)
    cycle = cycle_of(inserts, 2 * k + 37)  # two whole passes and the start of a third
    assert len(cycle) == 2 * k + 37
    assert (cycle.op[:k] == OP_INSERT).all() and (cycle.op[k : 2 * k] == OP_DELETE).all()
    assert (cycle.u[k : 2 * k] == new[::-1, 0]).all() and (cycle.v[k : 2 * k] == new[::-1, 1]).all()
    assert (cycle.op[2 * k :] == OP_INSERT).all() and (cycle.u[2 * k :] == new[:37, 0]).all()

    engine = CpuEngine()
    engine.load_graph(graph_of(start))
    engine.register(0, TRI, from_seq=0, count_only=True)
    res = engine.apply(cycle)
    assert (res.outcome == OUTCOME_APPLIED).all()
    signed = res.counts.sign.astype(np.int64) * res.counts.count
    made = signed[res.counts.seq < k].sum()
    ended = signed[(res.counts.seq >= k) & (res.counts.seq < 2 * k)].sum()
    assert made > 0 and made + ended == 0, (made, ended)
    assert edge_set(engine.export_graph()) == edge_set(graph_of(np.r_[start, new[:37]]))


def test_cycle_refuses_a_stream_with_deletions() -> None:
    cycle_of = bench_script("gpu_bench").insert_delete_cycle
    ops = np.array([OP_INSERT, OP_DELETE])
    mixed = UpdateBatch.from_arrays(ops, np.array([1, 1]), np.array([2, 2]))
    with pytest.raises(ValueError, match="stream of insertions"):
        cycle_of(mixed, 10)
