"""The GPU static matcher (gpu/static_match.py) against the CPU engine's static matching:
counts, and every match row (as sorted multisets of external-id rows)."""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.plan import orbit_plans, plan_query, static_plan
from dcsm.errors import EngineError
from dcsm.gpu.label_count import HUB_ROOTS, NARROW_MAX, LabelCounter
from dcsm.gpu.static_match import (
    BESIDE_COUNT_MIN_BLOCKS,
    ORDER_DEGREE,
    ORDER_EXT,
    SP_INTS,
    SP_ORDER,
    SP_TAIL,
    DeviceCsr,
    StaticMatcher,
    csr_from_edges,
    device_plan,
    load_module,
)
from dcsm.graphio import read_csm_query, read_graph
from dcsm.model import Graph, Pattern

_ = None  # wildcard label


def _p(name: str, vl: list, edges: list, distinct: bool = False) -> Pattern:
    return Pattern.build(name, vl, [e if len(e) == 3 else (*e, None) for e in edges], distinct)


TRI = [(0, 1), (1, 2), (0, 2)]
C4 = [(0, 1), (1, 2), (2, 3), (3, 0)]
STAR = [(0, 1), (0, 2), (0, 3)]
K5 = [(u, v) for u in range(5) for v in range(u + 1, 5)]
PATTERNS = [
    _p("edge", [0, 1], [(0, 1)]),
    _p("edge_d", [_, _], [(0, 1, 1)], True),
    _p("tri", [_] * 3, TRI),
    _p("tri_d", [_] * 3, TRI, True),
    _p("tri_lab", [0, 1, _], [(0, 1), (1, 2, 0), (0, 2)]),
    _p("path3", [1, _, 0], [(0, 1), (1, 2)]),
    _p("path4_d", [_] * 4, [(0, 1), (1, 2), (2, 3)], True),
    _p("path4_lab", [0, _, _, 1], [(0, 1, 1), (1, 2), (2, 3, 0)]),
    _p("c4", [_] * 4, C4),
    _p("c4_d", [_] * 4, C4, True),
    _p("c4_lab", [0, _, 0, _], [(0, 1, 0), (1, 2), (2, 3, 0), (3, 0)]),
    _p("star", [0, _, _, _], STAR),
    _p("star_d", [1, _, _, _], STAR, True),
    _p("k5", [_] * 5, K5),
    _p("k5_d", [_] * 5, K5, True),
    _p("house_d", [_] * 5, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 4), (1, 4)], True),
    _p("tailed6", [0, _, _, 1, _, 2], [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5)]),
    _p("c6_d", [_] * 6, [(i, (i + 1) % 6) for i in range(6)], True),
]
BY_NAME = {p.name: p for p in PATTERNS}


def graph_from_nx(g: nx.Graph, seed: int, vlabels: int = 3, elabels: int = 2) -> Graph:
    """``g`` with random external ids (not in the internal order, so symmetry breaking on
    external ids is exercised), vertex labels 0..vlabels-1 and edge labels 0..elabels-1."""
    rng = np.random.default_rng(seed)
    n = g.number_of_nodes()
    ids = rng.choice(10**12, size=n, replace=False).astype(np.int64)
    e = np.array(list(g.edges()), np.int64).reshape(-1, 2)
    return Graph(
        vertex_ids=ids,
        vertex_labels=rng.integers(0, vlabels, n).astype(np.int32),
        src=ids[e[:, 0]],
        dst=ids[e[:, 1]],
        edge_labels=rng.integers(0, elabels, len(e)).astype(np.int32),
    )


def on_device(g: Graph) -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    """The graph in the CPU engine, and the same graph (same internal ids) as a device CSR;
    also the external id of each internal id."""
    cpu = CpuEngine()
    cpu.load_graph(g)
    e = cpu.export_graph()
    ids = e.vertex_ids
    sorter = np.argsort(ids, kind="stable")
    a = sorter[np.searchsorted(ids, e.src, sorter=sorter)]
    b = sorter[np.searchsorted(ids, e.dst, sorter=sorter)]
    csr = csr_from_edges(len(ids), np.minimum(a, b), np.maximum(a, b), e.edge_labels,
                         e.vertex_labels, ids)  # fmt: skip
    return cpu, csr, ids


def sorted_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, np.int64)
    return rows[np.lexsort(rows.T[::-1])] if len(rows) else rows


def assert_same_matches(m: StaticMatcher, cpu: CpuEngine, csr: DeviceCsr, ids: np.ndarray,
                        p: Pattern, **kw: int) -> int:  # fmt: skip
    """GPU count and rows equal the CPU's; returns the count."""
    want = sorted_rows(cpu.match_static(p))
    assert cpu.count_static(p) == len(want)
    assert m.count(csr, p) == len(want), p.name
    got = m.match(csr, p, **kw)
    assert got.dtype == np.int32 and got.shape == (len(want), p.num_vertices), p.name
    np.testing.assert_array_equal(sorted_rows(ids[got]), want, err_msg=p.name)
    return len(want)


@pytest.fixture(scope="module")
def matcher() -> StaticMatcher:
    return StaticMatcher()


# (nodes, edges, patterns left out): degrees from a few to about 60, straddling the
# 32-candidate window; the patterns whose match count explodes on the denser graphs are
# left out there (the CPU side has to enumerate them too).
HEAVY = {"path4_d", "house_d", "tailed6", "c6_d"}
CASES = {
    0: (40, 300, set()),
    1: (120, 1500, HEAVY),
    2: (300, 6000, HEAVY | {"star", "star_d", "c4", "c4_d"}),
    3: (3000, 9000, set()),
}


@functools.cache
def random_case(seed: int) -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    n, m, _skip = CASES[seed]
    return on_device(graph_from_nx(nx.gnm_random_graph(n, m, seed=seed), seed))


@pytest.mark.parametrize(
    "seed,name", [(s, p.name) for s, c in CASES.items() for p in PATTERNS if p.name not in c[2]]
)
def test_random_graph_same_as_cpu(matcher: StaticMatcher, seed: int, name: str) -> None:
    cpu, csr, ids = random_case(seed)
    assert_same_matches(matcher, cpu, csr, ids, BY_NAME[name])


def test_random_graphs_find_matches() -> None:
    """The comparisons above compare something: most patterns have matches on every graph."""
    for seed, (_n, _m, skip) in CASES.items():
        cpu, _csr, _ids = random_case(seed)
        names = [p.name for p in PATTERNS if p.name not in skip]
        found = [name for name in names if cpu.count_static(BY_NAME[name]) > 0]
        assert len(found) >= len(names) - 2, (seed, found)


def test_event_waits_give_the_same_matches() -> None:
    """A matcher built as the one beside the persistent kernel (it waits on an event before
    each copy; its count kernels capped at BESIDE_COUNT_MIN_BLOCKS blocks an SM) counts and
    enumerates what the CPU engine does, in chunks too."""
    m = StaticMatcher(event_waits=True, count_min_blocks=BESIDE_COUNT_MIN_BLOCKS)
    cpu, csr, ids = random_case(1)
    for name in ("tri", "c4", "path3"):
        assert assert_same_matches(m, cpu, csr, ids, BY_NAME[name], chunk_rows=500) > 0


def test_count_mode_plan_gives_the_same_count(matcher: StaticMatcher) -> None:
    cpu, csr, _ids = random_case(1)
    for p in (BY_NAME["c4"], BY_NAME["k5"], BY_NAME["tailed6"]):
        want = cpu.count_static(p)
        assert want > 0
        assert matcher.count(csr, orbit_plans(plan_query(p))) == want
        assert matcher.count(csr, plan_query(p)) == want


@functools.cache
def hub_case() -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    """One hub joined to 6000 of 6500 vertices, plus 15000 random edges among the rest."""
    g = nx.gnm_random_graph(6500, 15000, seed=7)
    g.remove_edges_from([(0, v) for v in list(g.neighbors(0))])
    g.add_edges_from((0, v) for v in range(1, 6001))
    return on_device(graph_from_nx(g, 7, vlabels=4))


@pytest.mark.parametrize(
    "name", ["tri", "tri_d", "tri_lab", "path3", "path4_lab", "c4_lab", "star_d"]
)
def test_hub_same_as_cpu(matcher: StaticMatcher, name: str) -> None:
    cpu, csr, ids = hub_case()
    assert np.diff(csr.off.get()).max() == 6000
    assert assert_same_matches(matcher, cpu, csr, ids, BY_NAME[name]) > 0


def test_hub_counts_same_as_cpu(matcher: StaticMatcher) -> None:
    """Patterns with too many matches to ship cheaply: counts only."""
    cpu, csr, _ids = hub_case()
    for p in (_p("wedge", [_, _, _], [(0, 1), (1, 2)]), BY_NAME["c4"]):
        want = cpu.count_static(p)
        assert want > 400_000, p.name
        assert matcher.count(csr, p) == want, p.name


@pytest.mark.parametrize("defines", ["-DPAIRS_MAX_LIST=0", "-DPAIRS_MAX_LIST=3"])
def test_last_level_walked_together_or_alone_counts_alike(
    monkeypatch: pytest.MonkeyPatch, defines: str
) -> None:
    """count_last_pairs walks last-level scans of PAIRS_MAX_LIST entries or fewer together
    and longer ones one candidate at a time: with every scan long (0), or short and long
    ones in most windows (3), every count equals the CPU's, the hub's graph included."""
    monkeypatch.setenv("DCSM_STATIC_DEFINES", defines)
    load_module.cache_clear()
    try:
        m = StaticMatcher()
        light = ("c4", "c4_d", "k5", "c4_lab", "path4_lab")
        for (cpu, csr, _ids), names in (
            (random_case(1), light),
            (random_case(3), (*light, "house_d", "c6_d")),
            (hub_case(), ("c4", "c4_lab", "k5")),
        ):
            for name in names:
                p = BY_NAME[name]
                assert m.count(csr, p) == cpu.count_static(p), (defines, name)
    finally:
        load_module.cache_clear()


@pytest.mark.parametrize(
    "case,name,chunk_rows,segment_starts",
    # The hub in the middle of path3: ~1500 matches per start edge, more than a chunk.
    [("hub", "path3", 1000, 1 << 22), (0, "tri", 7, 5000), (1, "c4_d", 333, 1),
     (2, "tri", 50, 64)],
)  # fmt: skip
def test_chunks_are_bounded_and_complete(
    matcher: StaticMatcher, case: str | int, name: str, chunk_rows: int, segment_starts: int
) -> None:
    """Tiny chunks and segments yield the same rows as one large chunk, and no chunk holds
    more rows than asked for."""
    cpu, csr, ids = hub_case() if case == "hub" else random_case(int(case))
    p = BY_NAME[name]
    whole = np.concatenate(list(matcher.enumerate(csr, p, chunk_rows=1 << 24)))
    parts = list(matcher.enumerate(csr, p, chunk_rows=chunk_rows, segment_starts=segment_starts))
    sizes = [len(x) for x in parts]
    total = sum(sizes)
    assert total == len(whole) == cpu.count_static(p) > 10 * chunk_rows
    assert max(sizes) <= chunk_rows and min(sizes) >= 1
    assert len(parts) >= total // chunk_rows
    got = sorted_rows(np.concatenate(parts))
    np.testing.assert_array_equal(got, sorted_rows(whole))
    np.testing.assert_array_equal(sorted_rows(ids[got]), sorted_rows(cpu.match_static(p)))


# Patterns whose last steps are pendants, counted as a product (static_match.tail_start):
# one pendant (a trailing leaf), several with different labels, a symmetric star.
C5_TAILS = [(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 4, 0), (4, 0, 0), (1, 5, 0), (3, 6, 0)]
TAILS = [
    BY_NAME["path3"],
    BY_NAME["star"],
    BY_NAME["star_d"],
    _p("wedge", [_, _, _], [(0, 1), (1, 2)]),
    _p("tri_tails", [_, _, _, 0, 1, 2], [*TRI, (0, 3), (1, 4), (2, 5)]),
    _p("tri_tails_d", [_, _, _, 0, 1, 2], [*TRI, (0, 3), (1, 4), (2, 5)], True),
    _p("c5_tails", [_, _, _, _, _, 1, 2], C5_TAILS),  # oracle-github Q_12's shape
]


@functools.cache
def one_label_case() -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    """Every edge labelled 0: query edges of label 0 match any edge."""
    return on_device(graph_from_nx(nx.gnm_random_graph(150, 700, seed=11), 11, elabels=1))


@pytest.mark.parametrize("name", [p.name for p in TAILS])
def test_pendant_tails_counted_as_products(matcher: StaticMatcher, name: str) -> None:
    """Counting multiplies the candidates of trailing pendants instead of walking them: the
    same count as the CPU engine's walk, on a graph with one edge label (c5_tails's label-0
    edges become any-label edges, so it has a tail only there) and on one with two."""
    p = next(t for t in TAILS if t.name == name)
    for cpu, csr, _ids in (one_label_case(), random_case(0)):
        tail = device_plan(p, count=True).for_graph(csr.elab_one, True)[SP_TAIL]
        walked = device_plan(p).for_graph(csr.elab_one, False)[SP_TAIL]
        assert walked == p.num_vertices
        if csr.elab_one is not None or name != "c5_tails":
            assert 2 <= tail < p.num_vertices, (name, tail)
        want = cpu.count_static(p)
        assert want > 0, name
        assert matcher.count(csr, p) == want, name
    assert one_label_case()[1].elab_one == 0 and random_case(0)[1].elab_one is None


def _labelled_star(k: int, d: int) -> tuple[DeviceCsr, Pattern]:
    """A hub (label 0) with d leaves of each label 1..k, and the star pattern with one leaf
    of each label: d**k embeddings, all but the first leaf counted as a product."""
    nv = 1 + k * d
    leaves = np.arange(1, nv, dtype=np.int64)
    vlab = np.concatenate([[0], np.repeat(np.arange(1, k + 1), d)]).astype(np.int32)
    csr = csr_from_edges(nv, np.zeros(nv - 1, np.int64), leaves, np.zeros(nv - 1, np.int32),
                         vlab, np.arange(nv, dtype=np.int64))  # fmt: skip
    return csr, _p(f"star{k}", [0, *range(1, k + 1)], [(0, x) for x in range(1, k + 1)])


def test_counts_past_2_to_the_64_are_exact(matcher: StaticMatcher) -> None:
    """Counts are 128-bit on the device: exact past 2**64 in the sum over start edges
    (600**6 a start, 600 starts) and in one start's product (100**11); past 2**128 the
    count raises (an EngineError: `dcsm match` and a registration report it) instead of
    wrapping."""
    for k, d in ((7, 500), (7, 600), (12, 100)):
        csr, p = _labelled_star(k, d)
        assert device_plan(p, count=True).for_graph(csr.elab_one, True)[SP_TAIL] == 2
        assert matcher.count(csr, p) == d**k, (k, d)
    csr, p = _labelled_star(15, 400)
    with pytest.raises(EngineError, match="passed 2\\^128"):
        matcher.count(csr, p)


@pytest.mark.parametrize("n", [1, 255, 256, 257, 5000, 1024 * 256 + 7, 3_000_001])
def test_units_prefix_sum(matcher: StaticMatcher, n: int) -> None:
    """The count's own prefix sum (chunks per block, one block's scan of the chunk sums)
    equals numpy's, across one tile, one chunk a block, and several tiles a chunk."""
    import cupy as cp

    host = np.random.default_rng(n).integers(0, 1 << 40, n, dtype=np.uint64)
    with matcher.stream:
        a = cp.asarray(host)
        matcher._prefix_sum(a)
    assert np.array_equal(a.get(stream=matcher.stream), np.cumsum(host, dtype=np.uint64))


def test_device_snapshot_backfills_beside_the_stream() -> None:
    """GpuEngine(static_beside=True).static_snapshot(): its slices, run while the persistent
    kernel applies deletions of the snapshot's edges, give the graph as it was at the
    snapshot (counts and rows equal the CPU engine's static matches of it), a row limit
    keeps the count whole, and the stream's own result is the CPU engine's."""
    import threading

    from dcsm.gpu.engine import GpuEngine
    from dcsm.loadgen.gen_stream import chunglu_graph
    from dcsm.model import UpdateBatch

    tri = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
    g = chunglu_graph(20_000, seed=4)
    eng, cpu = GpuEngine(static_beside=True), CpuEngine()
    eng.load_graph(g)
    cpu.load_graph(g)
    snap = eng.static_snapshot()
    assert snap is not None
    want = sorted_rows(cpu.match_static(tri))
    eng.register(1, tri, from_seq=0, count_only=True)
    cpu.register(1, tri, from_seq=0, count_only=True)
    gone = UpdateBatch.from_arrays(np.full(3000, -1), g.src[:3000], g.dst[:3000])
    eng.apply(gone)  # the kernel stays up after it
    results: list[tuple[int, np.ndarray]] = []

    def backfill() -> None:
        cuts, _ = snap.slices(5)
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            results.append(snap.run(tri, int(a), int(b), True))
        results.append(snap.run(tri, 0, snap.start_edges, True, limit=7))

    runner = threading.Thread(target=backfill)
    runner.start()
    runner.join(30.0)
    blocked, running = runner.is_alive(), eng._running
    after = eng.count_static(tri)  # stops the kernel, which lets a blocked backfill finish
    runner.join()
    eng.close()
    assert not blocked, "the backfill waited for the persistent kernel"
    assert running
    *parts, limited = results
    assert sum(c for c, _ in parts) == len(want) > 0
    np.testing.assert_array_equal(sorted_rows(np.concatenate([r for _, r in parts])), want)
    assert limited[0] == len(want) and len(limited[1]) == 7
    assert set(map(tuple, limited[1].tolist())) <= set(map(tuple, want.tolist()))
    cpu.apply(gone)
    assert after == cpu.count_static(tri) < len(want)


def test_device_plans_break_symmetry() -> None:
    """A pattern runs its static plan: embeddings with the symmetry broken on the degree
    order, |Aut| embeddings a found match; distinct on external ids, one each; a plan
    without constraints (plan_query, orbit_plans) as it is, weight ignored."""
    for name, weight, order in (("k5", 120, ORDER_DEGREE), ("c4", 8, ORDER_DEGREE),
                                ("tri_lab", 1, ORDER_EXT), ("k5_d", 1, ORDER_EXT)):  # fmt: skip
        dp = device_plan(BY_NAME[name])
        n = BY_NAME[name].num_vertices
        got = (dp.weight, int(dp.blob[SP_ORDER]), dp.blob.shape)
        assert got == (weight, order, (SP_INTS,)), name
        assert dp.images.shape == (weight, n) and (dp.images[0] == np.arange(n)).all()
        # Every image is a distinct permutation of the query vertices.
        assert len({tuple(r) for r in dp.images}) == weight
        assert (np.sort(dp.images, axis=1) == np.arange(n)).all()
    for plan in (plan_query(BY_NAME["k5"]), orbit_plans(plan_query(BY_NAME["k5"]))):
        dp = device_plan(plan)
        assert (dp.weight, int(dp.blob[SP_ORDER])) == (1, ORDER_EXT)
    assert device_plan(static_plan(BY_NAME["k5"])).weight == 120
    # Counting a distinct pattern needs no particular representative: the degree order.
    assert int(device_plan(BY_NAME["k5_d"], count=True).blob[SP_ORDER]) == ORDER_DEGREE


def test_orbits_larger_than_a_chunk(matcher: StaticMatcher) -> None:
    """A found 5-clique stands for 120 rows: chunks of 50 rows hold one found match (120
    rows) each, and together every embedding once."""
    cpu, csr, ids = random_case(2)
    p = BY_NAME["k5"]
    parts = list(matcher.enumerate(csr, p, chunk_rows=50))
    assert parts and all(len(x) == 120 for x in parts)
    got = sorted_rows(ids[np.concatenate(parts)])
    np.testing.assert_array_equal(got, sorted_rows(cpu.match_static(p)))


def test_empty_results(matcher: StaticMatcher) -> None:
    cpu, csr, ids = random_case(0)
    for p in (_p("nolabel", [99, _, _], TRI), _p("noedge", [_, _], [(0, 1, 5)])):
        assert cpu.count_static(p) == 0
        assert matcher.count(csr, p) == 0
        assert list(matcher.enumerate(csr, p)) == []
        assert matcher.match(csr, p).shape == (0, p.num_vertices)
    # A graph with vertices but no edges, and one with nothing at all.
    g = Graph(np.array([5, 9], np.int64), np.zeros(2, np.int32), np.zeros(0, np.int64),
              np.zeros(0, np.int64), np.zeros(0, np.int32))  # fmt: skip
    for graph in (g, Graph.empty()):
        cpu, csr, ids = on_device(graph)
        assert matcher.count(csr, BY_NAME["tri"]) == 0
        assert matcher.match(csr, BY_NAME["edge_d"]).shape == (0, 2)


def test_sixteen_vertex_pattern(matcher: StaticMatcher) -> None:
    """The largest pattern: 16 vertices grown at random from one data vertex (so it has a
    match), with the data's labels (wildcards at three of them) and every data edge among
    them; eight labels keep the search tree small."""
    g = nx.gnm_random_graph(2000, 7000, seed=3)
    data = graph_from_nx(g, 3, vlabels=8)
    rng = np.random.default_rng(3)
    order, seen = [0], {0}
    while len(order) < 16:
        x = order[int(rng.integers(len(order)))]
        free = [y for y in g.neighbors(x) if y not in seen]
        if free:
            order.append(free[int(rng.integers(len(free)))])
            seen.add(order[-1])
    at = {v: i for i, v in enumerate(order)}
    labels = [None if i in (3, 7, 11) else int(data.vertex_labels[v]) for i, v in enumerate(order)]
    p = _p("sub16", labels, [(at[u], at[v]) for u, v in g.subgraph(order).edges()])
    cpu, csr, ids = on_device(data)
    assert assert_same_matches(matcher, cpu, csr, ids, p) > 0


def test_csr_from_edges(matcher: StaticMatcher) -> None:
    import cupy as cp

    rng = np.random.default_rng(1)
    nv = 500
    key = np.unique(rng.integers(0, nv, 4000) * nv + rng.integers(0, nv, 4000))
    lo, hi = key // nv, key % nv
    keep = lo < hi
    lo, hi = lo[keep], hi[keep]
    lab = rng.integers(0, 3, len(lo)).astype(np.int32)
    vlab = rng.integers(0, 3, nv).astype(np.int32)
    ext = rng.permutation(nv).astype(np.int64) * 3
    # The host reference: vertices by (label, degree, id), then both half edges in those
    # numbers, sorted by (row, neighbour).
    deg = np.bincount(np.r_[lo, hi], minlength=nv)
    vorder = np.lexsort((np.arange(nv), deg, vlab))
    rank = np.empty(nv, np.int64)
    rank[vorder] = np.arange(nv)
    src, dst, el = rank[np.r_[lo, hi]], rank[np.r_[hi, lo]], np.r_[lab, lab]
    order = np.lexsort((dst, src))
    off = np.r_[0, np.cumsum(np.bincount(src, minlength=nv))]
    assert (np.diff(off) == deg[vorder]).all()
    for a, b in ((lo, hi), (cp.asarray(lo, np.int32), cp.asarray(hi, np.int32))):
        csr = matcher.csr_from_edges(nv, a, b, lab, vlab, ext)
        np.testing.assert_array_equal(csr.off.get(), off)
        np.testing.assert_array_equal(csr.nbr.get(), dst[order])
        np.testing.assert_array_equal(csr.elab.get(), el[order])
        np.testing.assert_array_equal(csr.orig.get(), vorder)
        np.testing.assert_array_equal(csr.vlab.get(), vlab[vorder])
        np.testing.assert_array_equal(csr.ext.get(), ext[vorder])
    with pytest.raises(ValueError, match="twice"):
        csr_from_edges(nv, np.r_[lo, lo[:1]], np.r_[hi, hi[:1]], np.r_[lab, lab[:1]], vlab, ext)
    with pytest.raises(ValueError, match="lo >= hi"):
        csr_from_edges(nv, hi, lo, lab, vlab, ext)
    with pytest.raises(TypeError):
        csr_from_edges(nv, cp.asarray(lo, np.int16), cp.asarray(hi, np.int16), lab, vlab, ext)


def test_published_static_counts(matcher: StaticMatcher, data_dir: Path) -> None:
    """Citeseer's embeddings and oracle-github's static counts (three published systems
    agree on them), on the GPU alone."""
    cite = data_dir / "citeseer"
    for root in (cite, data_dir / "oracle-github"):
        if not (root / "expected_counts.tsv").is_file():
            pytest.skip(f"{root.name} is not in the reference data at {data_dir}")
    with open(cite / "expected_counts.tsv") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t") if r["automorphisms"]]
    _cpu, csr, _ids = on_device(read_graph(cite / "citeseer_unlabeled.graph"))
    col = next(k for k in rows[0] if k.startswith("embeddings"))
    for r in rows:
        p = read_csm_query(cite / "queries" / r["pattern"])
        assert matcher.count(csr, p) == int(r[col]), r["pattern"]
    root = data_dir / "oracle-github"
    with open(root / "expected_counts.tsv") as fh:
        expected = {r["query"]: int(r["static_matches_full_graph"])
                    for r in csv.DictReader(fh, delimiter="\t")}  # fmt: skip
    _cpu, csr, _ids = on_device(read_graph(root / "full.graph"))
    for name, want in expected.items():
        assert matcher.count(csr, read_csm_query(root / "queries" / name)) == want, name


# -- trees and cycles with fixed, all-different vertex labels: counted without a search ----


def _lpath(labels: list[int], elabels: list[int | None] | None = None) -> Pattern:
    el = elabels or [None] * (len(labels) - 1)
    return _p("lpath", labels, [(i, i + 1, el[i]) for i in range(len(labels) - 1)])


def _lcycle(labels: list[int], elabels: list[int | None] | None = None) -> Pattern:
    k = len(labels)
    el = elabels or [None] * k
    return _p("lcycle", labels, [(i, (i + 1) % k, el[i]) for i in range(k)])


LABELLED = {
    "edge": _lpath([1, 0]),
    "path3": _lpath([2, 0, 1]),
    "path6": _lpath([0, 1, 2, 3, 4, 5]),
    "path5-elab": _lpath([3, 1, 0, 2, 4], [1, None, 0, 1]),
    "star5": _p("star5", [3, 0, 1, 2, 4], [(0, i) for i in range(1, 5)]),
    "spider": _p(
        "spider", [1, 0, 2, 3, 4, 5, 6], [(0, 1), (1, 2), (0, 3, 1), (3, 4), (0, 5), (5, 6, 0)]
    ),  # fmt: skip
    "tri": _lcycle([0, 1, 2]),
    "c4": _lcycle([2, 0, 3, 1]),
    "c5-elab": _lcycle([0, 1, 2, 3, 4], [None, 1, None, 0, None]),
    "c6": _lcycle([5, 0, 1, 2, 3, 4]),
    "c6-distinct": _p("c6d", [0, 1, 2, 3, 4, 5], [(i, (i + 1) % 6) for i in range(6)], True),
    "c7": _lcycle([6, 5, 4, 3, 2, 1, 0]),
}


@functools.cache
def labelled_case(seed: int) -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    from dcsm.loadgen.gen_stream import chunglu_graph

    edges, labels = ((3000, 7), (40_000, 7), (200_000, 7))[seed]
    return on_device(chunglu_graph(edges, edges // 6, labels=labels, edge_labels=2, seed=seed))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(LABELLED))
def test_labelled_trees_and_cycles_counted_as_the_search_counts(
    matcher: StaticMatcher, seed: int, name: str
) -> None:
    """The label counter (dynamic programming for trees, meeting in the middle for cycles)
    gives the device search's count and the CPU engine's, over the whole graph and over
    slices of start edges (which add up), on power-law graphs whose hubs take a whole block
    (a root's first step) or a warp (a layer's row)."""
    from dcsm.engine.cycle_count import counts_by_labels

    cpu, csr, _ = labelled_case(seed)
    p = LABELLED[name]
    assert counts_by_labels(p)
    m = matcher.start_edges(csr)
    whole = matcher._labels.count(csr, p, 0, m)
    assert whole is not None
    assert whole == matcher.count(csr, p) == matcher.count(csr, p, by_labels=False), name
    assert whole == cpu.count_static(p)  # the CPU engine counts these without a search too
    cuts = np.linspace(0, m, 6).astype(np.int64)
    bounds = zip(cuts[:-1], cuts[1:], strict=True)
    parts = [matcher.count(csr, p, (int(a), int(b))) for a, b in bounds]
    assert sum(parts) == whole
    assert whole > 0  # not vacuous: every label of these patterns is in the graph


def test_a_labelled_count_past_64_bits_searches_whole_and_refuses_a_slice(
    matcher: StaticMatcher,
) -> None:
    """600^7 embeddings of the labelled star at one hub: the counter's u64 messages overflow,
    so a whole-graph count falls back to the (128-bit) search and is exact; a slice raises
    (the search's slices hold other matches than the counter's)."""
    csr, p = _labelled_star(7, 600)
    m = matcher.start_edges(csr)
    assert matcher._labels.count(csr, p, 0, m) is None
    assert matcher.count(csr, p) == 600**7
    with pytest.raises(EngineError, match="passed 2\\^64 - 1 at one vertex"):
        matcher.count(csr, p, (0, m // 2))


def test_labelled_counts_beside_the_running_kernel() -> None:
    """The beside matcher's label counter (its kernels capped to fit beside the persistent
    kernel's blocks) counts a labelled path and cycle of a snapshot in slices while the
    kernel applies deletions: the snapshot's counts, the CPU engine's."""
    import threading

    from dcsm.gpu.engine import GpuEngine
    from dcsm.loadgen.gen_stream import chunglu_graph
    from dcsm.model import UpdateBatch

    g = chunglu_graph(60_000, 8_000, labels=6, edge_labels=1, seed=9)
    eng, cpu = GpuEngine(static_beside=True), CpuEngine()
    eng.load_graph(g)
    cpu.load_graph(g)
    snap = eng.static_snapshot()
    assert snap is not None
    pats = [LABELLED["path6"], LABELLED["c6"], LABELLED["c4"]]
    want = [cpu.count_static(p) for p in pats]
    tri = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
    eng.register(1, tri, from_seq=0, count_only=True)
    gone = UpdateBatch.from_arrays(np.full(5000, -1), g.src[:5000], g.dst[:5000])
    eng.apply(gone)  # the kernel stays up after it
    got: list[int] = []

    def backfill() -> None:
        cuts, _ = snap.slices(7)
        for p in pats:
            bounds = zip(cuts[:-1], cuts[1:], strict=True)
            got.append(sum(snap.run(p, int(a), int(b), False)[0] for a, b in bounds))

    runner = threading.Thread(target=backfill)
    runner.start()
    runner.join(30.0)
    blocked, running = runner.is_alive(), eng._running
    after = [eng.count_static(p) for p in pats]  # stops the kernel
    runner.join()
    eng.close()
    assert not blocked, "the backfill waited for the persistent kernel"
    assert running
    assert got == want and min(want) > 0
    cpu.apply(gone)
    assert after == [cpu.count_static(p) for p in pats]


def test_a_labelled_cycle_counts_alike_from_any_vertex(matcher: StaticMatcher) -> None:
    """The device counts each match of a labelled cycle from its highest-ranked vertex, on
    the walk from that vertex's label: the same cycle written from every vertex, both ways
    round, counts as the CPU engine does, whole and in slices."""
    cpu, csr, _ = labelled_case(1)
    base = LABELLED["c6"]
    want = cpu.count_static(base)
    m = matcher.start_edges(csr)
    cuts = np.linspace(0, m, 4).astype(np.int64)
    k = base.num_vertices
    for shift in range(k):
        for flip in (False, True):
            at = [((shift - i) if flip else (shift + i)) % k for i in range(k)]
            labels = [0] * k
            for i in range(k):
                labels[at[i]] = int(base.vlabels[i])
            p = _p("c6w", labels, [(at[i], at[(i + 1) % k]) for i in range(k)])
            assert matcher.count(csr, p) == want, (shift, flip)
            parts = [matcher.count(csr, p, (int(a), int(b)))
                     for a, b in zip(cuts[:-1], cuts[1:], strict=True)]  # fmt: skip
            assert sum(parts) == want, (shift, flip)


def test_a_labelled_cycle_through_a_missing_label_counts_nothing(matcher: StaticMatcher) -> None:
    """A labelled cycle one of whose labels no vertex carries has no match: 0 from the label
    counter (which builds nothing), as from the search."""
    _, csr, _ = labelled_case(0)
    p = _lcycle([0, 1, 9, 2])
    m = matcher.start_edges(csr)
    assert matcher._labels.count(csr, p, 0, m) == 0
    assert matcher.count(csr, p, by_labels=False) == 0


@pytest.mark.parametrize("n", [1, 16_384, 100_003])
def test_the_label_counters_scan_gives_the_prefix_sums(matcher: StaticMatcher, n: int) -> None:
    """The cycle rows' offsets come from a scan of one tile, or of many tiles and then their
    totals: either way numpy's cumulative sums."""
    import cupy as cp

    a = np.random.default_rng(n).integers(0, 1 << 20, n, dtype=np.int64)
    with matcher.stream:
        d = cp.asarray(a)
        matcher._labels._scan(d)
    assert np.array_equal(matcher._host(d), np.cumsum(a))


# -- rings of one label, and 4-cycles of two labels taking turns: counted without a search --

DIAMOND = [(0, 1), (1, 2), (2, 0), (1, 3), (3, 2)]
TAILED = [(0, 1), (1, 2), (2, 0), (0, 3)]
RINGS = {
    "c4": _p("c4", [0] * 4, C4),
    "c4-any-d": _p("c4", [_] * 4, C4, True),
    "c4-elab": _p("c4", [2] * 4, [(*e, 0) for e in C4]),
    "c4-ab": _p("c4ab", [0, 1, 0, 1], C4),
    "c4-ab-elab-d": _p("c4ab", [3, 1, 3, 1], [(*e, 1) for e in C4], True),
    "diamond": _p("diamond", [0] * 4, DIAMOND),
    "diamond-any": _p("diamond", [_] * 4, DIAMOND),
    "diamond-elab-d": _p("diamond", [1] * 4, [(*e, 1) for e in DIAMOND], True),
    "tailed": _p("tailed", [0] * 4, TAILED),
    "tailed-any": _p("tailed", [_] * 4, TAILED),
    "tailed-elab-d": _p("tailed", [1] * 4, [(*e, 1) for e in TAILED], True),
}


@functools.cache
def one_label_power_law() -> tuple[CpuEngine, DeviceCsr, np.ndarray]:
    """A power-law graph whose hubs take a block (a 4-cycle's root) or many warps (a ring's
    row entries), with one vertex label and two edge labels."""
    from dcsm.loadgen.gen_stream import chunglu_graph

    return on_device(chunglu_graph(150_000, 12_000, labels=1, edge_labels=2, seed=5))


def _ring_cases() -> list[tuple[str, str]]:
    """(graph, ring) pairs: every ring on the labelled graphs; on the one-label graph, those
    of label 0 or a wildcard; on the graph of one edge label, wildcard rings (their rows are
    the snapshot's own)."""
    one = [n for n, p in RINGS.items() if set(p.vlabels.tolist()) <= {0, -1}]
    own = ["c4-any-d", "diamond-any", "tailed-any"]  # the one-edge-label graph's own rows
    return [(c, n) for c in ("labelled-1", "labelled-2") for n in sorted(RINGS)] + [
        *(("one-label", n) for n in sorted(one)),
        *(("one-edge-label", n) for n in own),
    ]


@pytest.mark.parametrize(("case", "name"), _ring_cases())
def test_rings_counted_as_the_search_counts(matcher: StaticMatcher, case: str, name: str) -> None:
    """The ring counter (diamond_pairs: diamonds by their chords' common entries;
    tailed_pairs: tailed triangles by their triangles, each weighed by its vertices' other
    fitting neighbours; wedge_hubs, wedge_small and wedge_parts: 4-cycles by wedges) gives
    the CPU engine's
    count (which counts them without a search too, its own way), the device search's, and
    the same over slices of start edges, which add up; on power-law graphs with labels (a
    wildcard ring takes every vertex, ranked by id) and with one label."""
    from dcsm.gpu.label_count import counts_on_device, device_ring

    if case.startswith("one"):
        cpu, csr, _ = one_label_power_law() if case == "one-label" else one_label_case()
    else:
        cpu, csr, _ = labelled_case(int(case[-1]))
    p = RINGS[name]
    assert device_ring(p) is not None and counts_on_device(p)
    m = matcher.start_edges(csr)
    whole = matcher._labels.count(csr, p, 0, m)
    assert whole is not None and whole > 0, name  # not vacuous
    assert whole == matcher.count(csr, p) == cpu.count_static(p), name
    if case != "one-label":  # the search of a 4-cycle takes long there
        assert whole == matcher.count(csr, p, by_labels=False), name
    cuts = np.linspace(0, m, 6).astype(np.int64)
    bounds = zip(cuts[:-1], cuts[1:], strict=True)
    assert sum(matcher.count(csr, p, (int(a), int(b))) for a, b in bounds) == whole


def test_rings_of_a_missing_label_count_nothing(matcher: StaticMatcher) -> None:
    """A ring whose label no vertex carries: 0, with nothing launched."""
    _, csr, _ = labelled_case(0)
    m = matcher.start_edges(csr)
    for p in (_p("c4", [9] * 4, C4), _p("c4ab", [0, 9, 0, 9], C4), _p("d", [9] * 4, DIAMOND)):
        assert matcher._labels.count(csr, p, 0, m) == 0
        assert matcher.count(csr, p, by_labels=False) == 0


@pytest.mark.parametrize("narrow_max", [NARROW_MAX, 40, 0])
@pytest.mark.parametrize("hubs", [0, 1, 37, HUB_ROOTS])
@pytest.mark.parametrize("name", ["c4", "c4-any-d", "c4-ab"])
def test_four_cycles_alike_with_any_number_of_hub_roots(
    matcher: StaticMatcher, hubs: int, narrow_max: int, name: str
) -> None:
    """A 4-cycle's top ranks walked by the whole grid (wedge_hubs, each with its own count
    array) or in tables (wedge_small, wedge_parts): the same count with none, one, 37 or every rank
    (HUB_ROOTS passes the ranks here) of them, over the whole graph and over slices; with
    narrow hub counters (NARROW_MAX: every hub here; bytes for the ranks below the first
    row longer than 255, 16-bit counters above, both in use here), 32-bit ones (0), or
    both side by side (40: the top roots, which have more u, in 32-bit ones, the next ones
    in turns)."""
    cpu, csr, _ = labelled_case(2)
    p = RINGS[name]
    counter = LabelCounter(matcher.stream, matcher._host, hub_roots=hubs, narrow_max=narrow_max)
    m = matcher.start_edges(csr)
    want = cpu.count_static(p)
    assert want > 0 and counter.count(csr, p, 0, m) == want
    if hubs:  # byte counters and 16-bit ones
        assert 0 < counter.last_bytes < counter_ranks(matcher, csr, p)
    assert counter.last_hubs == min(hubs, counter_ranks(matcher, csr, p))
    assert_slices_add_up(counter, csr, p, m, want)


@pytest.mark.parametrize("limits", [(2, 2), (8, 40)])
@pytest.mark.parametrize("hubs", [0, HUB_ROOTS])
@pytest.mark.parametrize("name", ["c4", "c4-any-d", "c4-ab"])
def test_four_cycles_alike_with_small_wedge_tables(
    matcher: StaticMatcher, limits: tuple[int, int], hubs: int, name: str
) -> None:
    """The tables of the roots below the hubs capped at a few w (ring_count.cuh's
    SMALL_LIMIT and PART_LIMIT): roots pass from wedge_small's warp tables to wedge_parts,
    whose parts halve again and again (2: most parts of a root), and the count stays the
    CPU engine's, over the whole graph and over slices, with no hub roots and with all
    (whose row parts longer than 3 entries go to hub_rows in segments of 2: HUB_LONG,
    HUB_SEG; their items scattered three hubs at a time: HUB_GROUP; byte counters only for
    the w whose rows hold at most 3 entries: BYTE_MAX)."""
    cpu, csr, _ = labelled_case(2)
    p = RINGS[name]
    small, part = limits
    defines = (f"-DSMALL_LIMIT={small}", f"-DPART_LIMIT={part}", "-DHUB_LONG=3", "-DHUB_SEG=2",
               "-DHUB_GROUP=3", "-DBYTE_MAX=3")  # fmt: skip
    counter = LabelCounter(matcher.stream, matcher._host, hub_roots=hubs, defines=defines)
    m = matcher.start_edges(csr)
    want = cpu.count_static(p)
    assert want > 0 and counter.count(csr, p, 0, m) == want
    if hubs == 0:
        assert counter.last_bigs > 0  # roots went to wedge_parts
    assert_slices_add_up(counter, csr, p, m, want)


def assert_slices_add_up(
    counter: LabelCounter, csr: DeviceCsr, p: Pattern, m: int, want: int
) -> None:
    """``counter``'s counts of ``p`` over three slices of the start edges [0, m) add up to
    ``want``."""
    cuts = np.linspace(0, m, 4).astype(np.int64)
    bounds = zip(cuts[:-1], cuts[1:], strict=True)
    assert sum(counter.count(csr, p, int(a), int(b)) or 0 for a, b in bounds) == want


def counter_ranks(matcher: StaticMatcher, csr: DeviceCsr, p: Pattern) -> int:
    """The ranks of a ring's count: the vertices of its labels (a wildcard: all)."""
    vlab = matcher._host(csr.vlab)
    labels = set(p.vlabels.tolist())
    return len(vlab) if -1 in labels else int(np.isin(vlab, list(labels)).sum())


@pytest.mark.parametrize("narrow_max", [NARROW_MAX, 0])
def test_hub_roots_as_many_as_the_budget_holds(matcher: StaticMatcher, narrow_max: int) -> None:
    """A budget of 24 narrow count arrays (a byte for each rank below the byte ranks, 16-bit
    counters above) holds 24 hub roots with narrow counters, and as many 32-bit arrays (a
    word a rank) as fit in the same bytes; the rest go to the tables, and the count stays
    the CPU engine's."""
    cpu, csr, _ = labelled_case(2)
    p = RINGS["c4"]
    m, ranks = matcher.start_edges(csr), counter_ranks(matcher, csr, p)
    probe = LabelCounter(matcher.stream, matcher._host)
    assert probe.count(csr, p, 0, m) == cpu.count_static(p)
    narrow = (probe.last_bytes + 3) // 4 + (ranks - probe.last_bytes + 1) // 2
    counter = LabelCounter(matcher.stream, matcher._host, scratch_max=4 * 24 * narrow,
                           narrow_max=narrow_max)  # fmt: skip
    assert counter.count(csr, p, 0, m) == cpu.count_static(p)
    assert counter.last_hubs == (24 if narrow_max else 24 * narrow // ranks) > 0


def test_triangles_stay_with_the_search() -> None:
    """The search counts one-label triangles faster than a ring counter did
    (bench/results/static/rings-1128/), so the label counter does not take them; it takes
    tailed triangles (tailed_pairs), but not a tailed triangle whose pendant has a label of
    its own."""
    from dcsm.gpu.label_count import counts_on_device

    assert not counts_on_device(_p("tri", [0] * 3, TRI))
    assert counts_on_device(RINGS["tailed-any"])
    assert not counts_on_device(_p("tailed", [0, 0, 0, 1], TAILED))
