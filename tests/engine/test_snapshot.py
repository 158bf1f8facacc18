"""StaticSnapshot: slices of root vertices add up to the engine's static matching, and a
snapshot built from an exported graph (what a GPU engine's backfill beside the stream runs
on) matches exactly like the engine's own."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from dcsm.engine import cpu_kernels as kern
from dcsm.engine import snapshot
from dcsm.engine.cpu import CpuEngine
from dcsm.engine.plan import GraphShape, plan_query, stack_plans, static_plan
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Graph, Pattern, UpdateBatch

PATTERNS = [
    Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)]),
    Pattern.build("wedge", [0, 1, None], [(0, 1, None), (1, 2, None)]),
    Pattern.build("tailed", [None] * 4, [(0, 1, None), (1, 2, None), (0, 2, None), (2, 3, None)]),
    Pattern.build(
        "square",
        [None] * 4,
        [(0, 1, None), (1, 2, None), (2, 3, None), (0, 3, None)],
        distinct=True,
    ),  # fmt: skip
]


def rows(m) -> Counter:  # type: ignore[no-untyped-def]
    return Counter(map(tuple, m.tolist()))


def test_slices_and_exported_snapshots_match_like_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(snapshot, "PARALLEL_ENTRIES", 0)  # threads even on a small graph
    engine = CpuEngine()
    engine.apply(powerlaw_stream(60, 700, num_labels=2, seed=4))
    own = engine.static_snapshot()
    exported = StaticSnapshot.from_graph(engine.export_graph())
    nv = own.num_vertices
    assert exported.num_vertices == nv
    for p in PATTERNS:
        count, matches = engine.count_static(p), engine.match_static(p)
        assert count > 0, p.name
        cuts = [0, nv // 3, nv // 2, nv]
        parts = [own.run(p, lo, hi, emit=True) for lo, hi in zip(cuts, cuts[1:], strict=False)]
        assert sum(n for n, _ in parts) == count, p.name
        assert sum((rows(m) for _, m in parts), Counter()) == rows(matches), p.name
        n, m = exported.run(p, 0, nv, emit=True)
        assert n == count and rows(m) == rows(matches), p.name
        assert exported.run(p, 0, nv, emit=False)[0] == count
        one = own.run(p, 0, nv, emit=True)[1]
        assert rows(one) == rows(matches), p.name
        for threads in (1, 2, 3):  # slices on threads: the same rows in the same order
            n, m = own.run_all(p, emit=True, threads=threads)
            assert n == count and m.tolist() == one.tolist(), (p.name, threads)
        capped, first = own.run(p, 0, nv, emit=True, limit=5)
        assert capped == count and first.tolist() == matches[:5].tolist(), p.name


def test_every_start_finds_the_same_matches() -> None:
    """Whichever plan static matching starts from (the cost model picks one per graph),
    its matches are the same: every start, every pattern, counts and rows."""
    engine = CpuEngine()
    engine.apply(powerlaw_stream(60, 700, num_labels=2, seed=5))
    snap = engine.static_snapshot()
    for p in PATTERNS:
        want = rows(engine.match_static(p))
        for start in range(plan_query(p, break_symmetry=True).num_plans):
            plans = kern.plan_arrays(stack_plans([static_plan(p, start=start)]))
            cand = np.zeros((kern.K, int(snap.arrays[1].max()) + 1), np.int32)
            out = np.empty((1024, p.num_vertices), np.int32)
            n, out, k = kern.static_matches(0, p.num_vertices, True, kern.NO_STOP, snap.arrays,
                                            0, snap.num_vertices, plans, cand, out)  # fmt: skip
            assert n == sum(want.values()), (p.name, start)
            assert rows(snap.arrays[5][out[:k]]) == want, (p.name, start)


def test_the_cost_model_starts_where_candidates_are_few() -> None:
    """Plan 0 starts at the pattern's first edge. A tailed triangle written tail first would
    walk a hub's neighbours before closing the triangle (16.4 s against 0.68 s on enron):
    the model starts on a triangle edge instead, and at a rare label rather than a common
    one; where no plan is far cheaper, plan 0 stays."""
    hubby = GraphShape(excess_degree=80.0, closure=0.05, label_share={0: 0.99, 1: 0.01})
    tail_first = Pattern.build(
        "tail_first", [None] * 4, [(2, 3, None), (0, 1, None), (1, 2, None), (0, 2, None)]
    )
    assert static_plan(tail_first).order[0, :2].tolist() == [2, 3]
    x, y = static_plan(tail_first, hubby).order[0, :2].tolist()
    assert {x, y} <= {0, 1, 2}, (x, y)
    rare_last = Pattern.build("path", [0, 0, 1], [(0, 1, None), (1, 2, None)])
    assert 2 in static_plan(rare_last, hubby).order[0, :2].tolist()
    square = PATTERNS[3]
    assert (static_plan(square, hubby).order == static_plan(square).order).all()


def test_the_graph_shape_is_deterministic() -> None:
    engine = CpuEngine()
    engine.apply(powerlaw_stream(200, 3000, num_labels=3, seed=6))
    a, b = engine.static_snapshot().shape, engine.static_snapshot().shape
    assert a == b
    deg = engine.static_snapshot().arrays[1][: engine.num_vertices]
    assert a.excess_degree >= deg.mean() and 0 < a.closure < 1
    assert abs(sum(a.label_share.values()) - 1) < 1e-9 and set(a.label_share) <= {0, 1, 2}


def test_slices_cut_the_roots_by_degree_sums() -> None:
    """One rule for backfill slices and run_all: at most k slices of about equal degree
    sums, covering every root once; a hub takes a slice alone; an edgeless graph is one
    slice and an empty one none."""
    engine = CpuEngine()
    engine.apply(powerlaw_stream(400, 3000, seed=9))
    snap = engine.static_snapshot()
    deg = snap.arrays[1][: snap.num_vertices].astype(np.int64)
    for k in (1, 3, 8, 50, 10_000):
        cuts, work = snap.slices(k)
        assert cuts[0] == 0 and cuts[-1] == snap.num_vertices and (np.diff(cuts) > 0).all()
        assert len(cuts) - 1 <= k
        np.testing.assert_array_equal(work, np.r_[0, np.cumsum(deg)][cuts])
        # Every slice but those a single vertex fills holds at most its share plus one root.
        share = work[-1] / k
        for lo, hi, w in zip(cuts[:-1], cuts[1:], np.diff(work), strict=True):
            assert hi - lo == 1 or w <= share + deg[lo:hi].max(), (k, lo, hi, w)
    # A star: the hub holds half of all degree, so it is a slice of its own.
    star = CpuEngine()
    ids = np.arange(101, dtype=np.int64)
    star.load_graph(Graph(ids, np.zeros(101, np.int32), np.zeros(100, np.int64), ids[1:],
                          np.zeros(100, np.int32)))  # fmt: skip
    snap = star.static_snapshot()
    hub = int(np.argmax(snap.arrays[1][: snap.num_vertices]))
    cuts, _ = snap.slices(4)
    assert [hub, hub + 1] in [cuts[i : i + 2].tolist() for i in range(len(cuts) - 1)]
    edgeless = CpuEngine()
    edgeless.load_graph(Graph(ids[:3], np.zeros(3, np.int32), np.zeros(0, np.int64),
                              np.zeros(0, np.int64), np.zeros(0, np.int32)))  # fmt: skip
    assert edgeless.static_snapshot().slices(8)[0].tolist() == [0, 3]
    assert CpuEngine().static_snapshot().slices(8)[0].tolist() == [0]


def _churn(engine: CpuEngine, rng: np.random.Generator, n: int, first_seq: int) -> UpdateBatch:
    """n updates on ``engine``'s graph: deletions of a third of its edges (hubs' among them),
    insertions between its vertices, and edges to vertices it does not have yet."""
    g = engine.export_graph()
    pick = rng.choice(g.num_edges, size=min(g.num_edges, n // 3), replace=False)
    ids = g.vertex_ids
    k = n - len(pick)
    u = ids[rng.integers(0, len(ids), k)]
    new = 10**9 + rng.integers(0, 50, k)
    v = np.where(rng.random(k) < 0.8, ids[rng.integers(0, len(ids), k)], new)
    keep = u != v
    op = np.r_[np.full(len(pick), -1), np.ones(int(keep.sum()), np.int64)]
    src, dst = np.r_[g.src[pick], u[keep]], np.r_[g.dst[pick], v[keep]]
    order = rng.permutation(len(op))  # deletions and insertions interleaved
    return UpdateBatch.from_arrays(op[order], src[order], dst[order], first_seq=first_seq)


def _matches(snap: StaticSnapshot) -> list[tuple[int, Counter | None]]:
    """Every pattern's count, and the rows of the two with few matches (the others have
    millions on these graphs)."""
    nv = snap.num_vertices
    return [(snap.run(p, 0, nv, False)[0], rows(snap.run(p, 0, nv, True)[1]) if k < 2 else None)
            for k, p in enumerate(PATTERNS)]  # fmt: skip


def _edges(engine: CpuEngine) -> list[tuple[int, int]]:
    g = engine.export_graph()
    return sorted(zip(g.src.tolist(), g.dst.tolist(), strict=True))


@pytest.mark.parametrize("seed", [1, 2])
def test_a_snapshot_keeps_its_graph_while_the_engine_changes_it(seed: int) -> None:
    """static_snapshot copies off and deg only and reads the pool in place; the kernels move
    a list it reads before changing it (copy on write). Batches of deletions and insertions
    (hubs' lists, full lists that grow, the pool repacked) leave every snapshot matching
    the graph of its moment, on a thread while the engine applies them as well as after;
    the engine's own results and graph are those of an engine that took no snapshot."""
    import threading

    rng = np.random.default_rng(seed)
    engine, plain = CpuEngine(), CpuEngine()
    base = powerlaw_stream(300, 4000, num_labels=2, seed=seed)
    engine.apply(base)
    plain.apply(base)
    seq = len(base)
    for qid, pattern in enumerate(PATTERNS):  # the triangle's deltas, the others' counts
        engine.register(qid, pattern, from_seq=seq, count_only=qid > 0)
        plain.register(qid, pattern, from_seq=seq, count_only=qid > 0)
    taken: list[
        tuple[StaticSnapshot, list[tuple[int, Counter | None]]]
    ] = []  # (snapshot, its matches)
    repacked = False
    for round_ in range(4):
        snap = engine.static_snapshot()
        assert engine._shared[: engine.num_vertices].all()
        taken.append((snap, _matches(StaticSnapshot.from_graph(engine.export_graph()))))
        batch = _churn(engine, rng, 3000, seq)
        seq += len(batch)
        during: list[tuple[int, Counter | None]] = []
        reader = threading.Thread(target=lambda s=snap, out=during: out.extend(_matches(s)))
        pool = engine._nbr
        reader.start()
        got, want = engine.apply(batch), plain.apply(batch)
        reader.join()
        repacked |= engine._nbr is not pool
        np.testing.assert_array_equal(got.outcome, want.outcome)
        for name in ("query", "sign", "seq", "match"):
            np.testing.assert_array_equal(getattr(got.deltas, name), getattr(want.deltas, name))
        for name in ("query", "sign", "seq", "count"):
            np.testing.assert_array_equal(getattr(got.counts, name), getattr(want.counts, name))
        assert len(got.deltas) > 0 and len(got.counts) > 0
        assert during == taken[-1][1], round_
        for own, matches in taken:  # every snapshot so far, after this batch
            assert _matches(own) == matches, round_
    assert repacked, "the churn never repacked the pool: a case left untested"
    assert _edges(engine) == _edges(plain)
