"""The engine interface's documented contract, on the CPU engine: misuse errors, loading
rules, extreme vertex ids, outcome codes. Expected values are written out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.engine import make_engine
from dcsm.engine.cpu import CpuEngine
from dcsm.errors import BackendUnavailable, EngineError
from dcsm.model import (
    MAX_VERTEX_ID,
    OUTCOME_APPLIED,
    OUTCOME_LABEL_CONFLICT,
    OUTCOME_NOOP,
    OUTCOME_SELF_LOOP,
    Graph,
    Pattern,
    UpdateBatch,
)

TRIANGLE = Pattern.build("t", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])


def batch(*rows: tuple, first_seq: int = 0) -> UpdateBatch:
    """rows of (op, u, v[, label[, u_label, v_label]])."""
    full = [tuple(r) + (0, -1, -1)[len(r) - 3 :] for r in rows]
    cols = list(zip(*full, strict=True))
    return UpdateBatch.from_arrays(
        np.array(cols[0]),
        np.array(cols[1]),
        np.array(cols[2]),
        np.array(cols[3]),
        first_seq=first_seq,
        u_label=np.array(cols[4]),
        v_label=np.array(cols[5]),
    )


def test_misuse_is_an_engine_error() -> None:
    e = CpuEngine()
    e.register(0, TRIANGLE, from_seq=0)
    with pytest.raises(EngineError, match="query id 0 is already registered"):
        e.register(0, TRIANGLE, from_seq=5)
    e.apply(batch((1, 1, 2), (1, 2, 3)))
    with pytest.raises(EngineError, match="cannot register query 1 from seq 1"):
        e.register(1, TRIANGLE, from_seq=1)
    with pytest.raises(EngineError, match="batch starts at seq 0"):
        e.apply(batch((1, 3, 1)))
    with pytest.raises(EngineError, match="strictly increasing"):
        e.apply(
            UpdateBatch.from_arrays(
                np.array([1, 1]), np.array([1, 2]), np.array([3, 4]), seq=np.array([5, 5])
            )
        )
    with pytest.raises(EngineError, match="query id 9 is not registered"):
        e.unregister(9, from_seq=10)
    with pytest.raises(EngineError, match="load_graph must come before"):
        e.load_graph(Graph.empty())
    with pytest.raises(BackendUnavailable, match="unknown backend 'tpu'"):
        make_engine("tpu")


def test_outcomes_and_deltas_of_each_rule() -> None:
    e = CpuEngine()
    e.load_graph(
        Graph(
            np.array([1, 2, 3], np.int64),
            np.array([5, 5, 6], np.int32),
            np.array([1], np.int64),
            np.array([2], np.int64),
            np.array([0], np.int32),
        )
    )
    e.register(0, Pattern.build("e", [5, None], [(0, 1, None)]), from_seq=0)
    r = e.apply(
        batch(
            (1, 2, 1),  # 0 duplicate insert (reversed pair): noop
            (1, 2, 2),  # 1 self loop
            (1, 3, 1, 0, 5, -1),  # 2 vertex 3 has label 6, not 5: conflict
            (-1, 3, 1),  # 3 delete a missing edge: noop
            (-1, 9, 1),  # 4 delete touching an unknown vertex: noop, 9 not created
            (1, 3, 1, 4),  # 5 applied: new edge with label 4
            (1, 9, 3, 0, 5, -1),  # 6 applied: creates 9 with label 5
            (-1, 1, 3, 7),  # 7 applied: deletes 1-3 whatever label it names
        )
    )
    assert (
        r.outcome.tolist()
        == [OUTCOME_NOOP, OUTCOME_SELF_LOOP, OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP, OUTCOME_NOOP]
        + [OUTCOME_APPLIED] * 3
    )
    rows = sorted(
        zip(
            r.deltas.seq.tolist(),
            r.deltas.sign.tolist(),
            map(tuple, r.deltas.match.tolist()),
            strict=True,
        )
    )
    # The pattern "label-5 vertex, any neighbour": 1 and 9 carry label 5; 3 carries 6.
    assert rows == [(5, 1, (1, 3)), (6, 1, (9, 3)), (7, -1, (1, 3))]
    g = e.export_graph()
    assert dict(zip(g.vertex_ids.tolist(), g.vertex_labels.tolist(), strict=True)) == {
        1: 5,
        2: 5,
        3: 6,
        9: 5,
    }
    assert sorted(map(sorted, zip(g.src.tolist(), g.dst.tolist(), strict=True))) == [[1, 2], [3, 9]]


def test_loading_rules() -> None:
    """Undeclared endpoints get label 0; a repeated pair keeps its first label; self loops
    in a loaded graph are dropped."""
    e = CpuEngine()
    e.load_graph(
        Graph(
            np.array([10], np.int64),
            np.array([3], np.int32),
            np.array([10, 20, 10, 30], np.int64),
            np.array([20, 10, 10, 20], np.int64),
            np.array([1, 2, 0, 0], np.int32),
        )
    )
    g = e.export_graph()
    assert dict(zip(g.vertex_ids.tolist(), g.vertex_labels.tolist(), strict=True)) == {
        10: 3,
        20: 0,
        30: 0,
    }
    edges = {
        frozenset(p): lab
        for *p, lab in zip(g.src.tolist(), g.dst.tolist(), g.edge_labels.tolist(), strict=True)
    }
    assert edges == {frozenset((10, 20)): 1, frozenset((20, 30)): 0}


def test_extreme_vertex_ids_and_distinct_representatives() -> None:
    """Ids 0 and 2^63-1 work, and the distinct representative is the same whatever order
    the vertices were first seen in."""
    ids = [MAX_VERTEX_ID, 0, 2**62, 12345]
    distinct = Pattern.build("t", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)], True)
    reps = []
    for order in ([0, 1, 2, 3], [3, 2, 1, 0]):
        e = CpuEngine()
        e.register(0, distinct, from_seq=0)
        e.register(1, TRIANGLE, from_seq=0, count_only=True)
        vs = [ids[i] for i in order]
        r = e.apply(batch(*[(1, vs[a], vs[b]) for a in range(4) for b in range(a + 1, 4)]))
        assert int(r.counts.count.sum()) == 4 * 6  # K4: four triangles, six embeddings each
        assert len(r.deltas) == 4
        reps.append(sorted(map(tuple, r.deltas.match[:, :3].tolist())))
        assert e.count_static(distinct) == 4 and e.count_static(TRIANGLE) == 24
    assert reps[0] == reps[1]
