"""The GPU engine against the CPU engine (the oracle), match by match."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
from gpu_helpers import (
    PATTERNS,
    SQUARE,
    TRIANGLE,
    assert_same,
    canonical,
    cpu_run,
    edge_set,
    growing_workload,
    random_graph,
    random_stream,
    run,
)  # fmt: skip

from dcsm.engine.cpu import CpuEngine
from dcsm.errors import EngineError
from dcsm.gpu import engine as gpu_engine
from dcsm.gpu import pools
from dcsm.gpu.engine import GpuEngine
from dcsm.model import Graph, UpdateBatch

SMALL = dict(pool_slabs=1 << 14, max_vertices=1 << 16, max_versions=1 << 16, out_cap=1 << 20)


@pytest.mark.parametrize("seed", range(6))
# (b, batch cap, updates per apply call): one-update batches, small fixed batches, and
# batches that grow to whatever is waiting (the default).
@pytest.mark.parametrize("batch_size,batch_cap,chunk", [(1, 1, 50), (7, 7, 33), (64, 4096, 1000)])
@pytest.mark.parametrize("count_only", [False, True])
def test_random_streams(
    seed: int, batch_size: int, batch_cap: int, chunk: int, count_only: bool
) -> None:
    rng = np.random.default_rng(seed)
    g = random_graph(rng, nv=int(rng.integers(20, 60)), ne=int(rng.integers(40, 300)))
    stream = random_stream(rng, g, 400)
    want = cpu_run(g, stream, PATTERNS, count_only)
    eng = GpuEngine(batch_size=batch_size, batch_cap=batch_cap, **SMALL)
    got = run(eng, g, stream, PATTERNS, count_only, chunk)
    assert_same(got, want)


@pytest.mark.parametrize("n_updaters", [1, 2])
def test_several_updater_warps(n_updaters: int) -> None:
    rng = np.random.default_rng(11)
    g = random_graph(rng, nv=300, ne=3000)
    stream = random_stream(rng, g, 3000)
    want = cpu_run(g, stream, PATTERNS, False)
    got = run(GpuEngine(n_updaters=n_updaters, **SMALL), g, stream, PATTERNS, False, 3000)
    assert_same(got, want)


def test_fixed_batch_baseline_is_exact() -> None:
    rng = np.random.default_rng(5)
    g = random_graph(rng, nv=100, ne=600)
    stream = random_stream(rng, g, 700)
    want = cpu_run(g, stream, PATTERNS, False)
    got = run(GpuEngine(fixed_batch=128, **SMALL), g, stream, PATTERNS, False, 700)
    assert_same(got, want)


def _hub_graph(rng: np.random.Generator, leaves: int, on_hub: int | None = None) -> Graph:
    """Vertex 0, a hub joined to leaves 1..on_hub (all of them by default), and as many
    random edges among the leaves."""
    ids = np.arange(leaves + 1, dtype=np.int64)
    s = rng.integers(1, leaves + 1, leaves)
    d = rng.integers(1, leaves + 1, leaves)
    keep = s != d
    k = leaves if on_hub is None else on_hub
    src = np.concatenate([np.zeros(k, np.int64), s[keep]])
    dst = np.concatenate([ids[1 : k + 1], d[keep]])
    return Graph(ids, np.zeros(leaves + 1, np.int32), src, dst, np.zeros(len(src), np.int32))


def _hub_stream(rng: np.random.Generator, leaves: int, n: int, on_hub: float) -> UpdateBatch:
    """n updates (70% insertions) among the leaves of _hub_graph (closing triangles through
    the hub), a share `on_hub` of them on hub edges."""
    u = np.where(rng.random(n) < on_hub, 0, rng.integers(1, leaves + 1, n))
    v = rng.integers(1, leaves + 1, n)
    op = np.where(rng.random(n) < 0.7, 1, -1).astype(np.int8)
    return UpdateBatch.from_arrays(op, u, v)


def _random_and_hub(seed: int) -> list[tuple[Graph, UpdateBatch]]:
    """A random graph with a stream of 1,200 updates, and a hub of 20,000 leaves with 600
    (30 % of them on the hub)."""
    rng = np.random.default_rng(seed)
    g = random_graph(rng, nv=60, ne=500)
    return [
        (g, random_stream(rng, g, 1200)),
        (_hub_graph(rng, 20_000), _hub_stream(rng, 20_000, 600, 0.3)),
    ]


def _two_hubs(rng: np.random.Generator, leaves: int, n: int) -> tuple[Graph, UpdateBatch]:
    """Vertices 0 and 1, each joined to every leaf 2..leaves+1, and as many random edges
    among the leaves; n updates (half insertions): a fifth on the edge between the hubs, two
    fifths between a hub and a leaf, the rest among the leaves."""
    ids = np.arange(leaves + 2, dtype=np.int64)
    lv = ids[2:]
    s, d = rng.integers(2, leaves + 2, leaves), rng.integers(2, leaves + 2, leaves)
    keep = s != d
    src = np.concatenate([np.zeros(leaves, np.int64), np.ones(leaves, np.int64), s[keep]])
    dst = np.concatenate([lv, lv, d[keep]])
    g = Graph(ids, np.zeros(leaves + 2, np.int32), src, dst, np.zeros(len(src), np.int32))
    kind = rng.random(n)
    u = np.where(kind < 0.6, rng.integers(0, 2, n), rng.integers(2, leaves + 2, n))
    v = np.where(kind < 0.2, 1 - u, rng.integers(2, leaves + 2, n))
    op = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    return g, UpdateBatch.from_arrays(op, u, v)


def test_hub_vertex_of_degree_100k() -> None:
    rng = np.random.default_rng(7)
    g = _hub_graph(rng, 100_000)
    n = 2000
    stream = _hub_stream(rng, 100_000, n, 0.3)
    pats = [TRIANGLE, SQUARE]
    want = cpu_run(g, stream, pats, True)
    got = run(GpuEngine(), g, stream, pats, True, n)
    assert_same(got, want)
    want_e = cpu_run(g, stream.slice(0, 300), [TRIANGLE], False)
    got_e = run(GpuEngine(), g, stream.slice(0, 300), [TRIANGLE], False, 300)
    assert_same(got_e, want_e)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["always", "alternate"])
def test_short_path_for_small_batches(
    seed: int, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches of at most 32 updates applied by one updater warp (updater_small.cuh): every
    one of them, or every other one (SMALL_PROBE=2 flips the cost models' choice on every
    second batch, so the short path and the job pipeline interleave), with the self-checks
    compiled in. The engine's profile shows how many took the short path."""
    if mode == "alternate":
        monkeypatch.setenv("DCSM_KERNEL_DEFINES", "-DSMALL_PROBE=2")
    rng = np.random.default_rng(100 + seed)
    g = random_graph(rng, nv=int(rng.integers(20, 80)), ne=int(rng.integers(40, 400)))
    stream = random_stream(rng, g, 1500)
    want = cpu_run(g, stream, PATTERNS, seed % 2 == 1)
    cap = int(rng.integers(2, 33))
    eng = GpuEngine(batch_size=1, batch_cap=cap, check=True,
                    small_path=2 if mode == "always" else 1, **SMALL)  # fmt: skip
    prof: dict[str, float] = {}
    got = run(eng, g, stream, PATTERNS, seed % 2 == 1, 97,
              before_close=lambda e: prof.update(e.updater_profile()))  # fmt: skip
    assert_same(got, want)
    assert prof["small_batches"] > 0
    if mode == "always":
        assert prof["small_batches"] == prof["batches"], prof
    else:
        assert 0 < prof["small_batches"] < prof["batches"], prof  # both paths ran


def _deletions(rng: np.random.Generator, g: Graph, n: int) -> UpdateBatch:
    """n deletions alone: of g's edges (either way round, many twice in one batch), of
    missing edges among g's vertices, and of edges of vertices nobody has seen (no-ops)."""
    pick = rng.integers(0, g.num_edges, n)
    flip = rng.random(n) < 0.5
    u = np.where(flip, g.dst[pick], g.src[pick])
    v = np.where(flip, g.src[pick], g.dst[pick])
    missing = rng.random(n) < 0.2
    u = np.where(missing, g.vertex_ids[rng.integers(0, g.num_vertices, n)], u)
    unseen = rng.random(n) < 0.05
    v = np.where(unseen, 10**13 + rng.integers(0, 100, n), v)
    again = rng.random(n) < 0.3  # the same edge as an update a little earlier, turned round
    back = np.maximum(0, np.arange(n) - rng.integers(1, 40, n))
    u, v = np.where(again, v[back], u), np.where(again, u[back], v)
    return UpdateBatch.from_arrays(-np.ones(n, np.int8), u, v)


def _joined(parts: list[UpdateBatch]) -> UpdateBatch:
    """The parts one after another, numbered anew (UpdateBatch.concat keeps their seqs)."""
    whole = UpdateBatch.concat(parts)
    return dataclasses.replace(whole, seq=np.arange(len(whole), dtype=np.int64))


@pytest.mark.parametrize("count_only", [False, True])
def test_deletion_batches_alike(count_only: bool) -> None:
    """DELETE_PATH (on by default, layout.cuh): a bulk batch of deletions alone takes two jobs,
    not the pipeline (updater.cuh, apply_deletions). Apply calls of deletions alone (many of
    one edge in one batch, either way round; missing edges; unseen vertices) between calls
    of mixed updates, on a random graph and on a hub of 20,000 leaves whose lists have tails
    (tail_div 1); then calls of 1,500 that the updater reads as long runs, one of deletions
    alone and one whose insertions come after 1,200 deletions (so that every way records
    enter a batch must see an insertion): self-checks on, the short path off, outcomes,
    matches and counts equal the CPU engine's. Then a run of deletions alone never reaches
    J_SEGINFO."""
    rng = np.random.default_rng(53)
    g = random_graph(rng, nv=60, ne=500)
    hub = _hub_graph(rng, 20_000)
    d = _deletions(rng, hub, 600)
    on_hub = np.where(np.arange(600) % 3 == 0, 0, d.u)  # a third of them of hub edges
    cases = [
        (g, _joined([random_stream(rng, g, 600), _deletions(rng, g, 600),
                     random_stream(rng, g, 300), _deletions(rng, g, 300)])),
        (hub, _joined([_hub_stream(rng, 20_000, 600, 0.3),
                       UpdateBatch.from_arrays(d.op, on_hub, d.v)])),
    ]  # fmt: skip
    for graph, stream in cases:
        want = cpu_run(graph, stream, PATTERNS, count_only)
        eng = GpuEngine(check=True, tail_div=1, small_path=0)
        assert_same(run(eng, graph, stream, PATTERNS, count_only, 100), want)
    # Calls of 1,500: the records go in as long runs (read_wide, read_run), a batch of
    # deletions alone, then one whose insertions come only after 1,200 deletions.
    long = _joined([_deletions(rng, g, 1500), _deletions(rng, g, 1200),
                    random_stream(rng, g, 300)])  # fmt: skip
    want = cpu_run(g, long, PATTERNS, count_only)
    eng = GpuEngine(check=True, tail_div=1, small_path=0)
    assert_same(run(eng, g, long, PATTERNS, count_only, 1500), want)
    profiles: list[dict[str, float]] = []
    alone = _deletions(rng, g, 900)
    eng = GpuEngine(check=True, tail_div=1, small_path=0)
    got = run(eng, g, alone, PATTERNS, count_only, 300,
              before_close=lambda e: profiles.append(e.updater_profile()))  # fmt: skip
    assert_same(got, cpu_run(g, alone, PATTERNS, count_only))
    prof = profiles[-1]
    # (updater_profile names only the steps that took time.)
    assert prof["batches"] > 0 and prof.get("step_classify_us", 0) > 0, prof
    assert prof.get("step_seginfo_us", 0) == 0, prof


@pytest.mark.parametrize("defines", ["", "-DPAIRS_MAX_LIST=0", "-DPAIRS_MAX_LIST=3"])
def test_last_levels_walked_together_count_alike(
    defines: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting, an executor walks the last level of every candidate of a level n-2 window
    at once when its scan has at most PAIRS_MAX_LIST entries (count_last_pairs), longer ones
    alone. The default, every scan long (0) and a mix in most windows (3), on a random graph
    and on a hub of 20,000 leaves, self-checks on: counts equal the CPU engine's."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", defines)
    for g, stream in _random_and_hub(31):
        want = cpu_run(g, stream, PATTERNS, True)
        got = run(GpuEngine(check=True), g, stream, PATTERNS, True, 150)
        assert_same(got, want)


@pytest.mark.parametrize(
    "defines",
    [
        "-DMERGE_MIN=2 -DMERGE_RATIO=1000000",
        "-DMERGE_MIN=2 -DMERGE_RATIO=1000000 -DPAIRS_MAX_LIST=0 -DDONATE_EVERY=1"
        " -DMERGE_PREFETCH=1",
    ],
)
def test_last_levels_merged_count_alike(defines: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting, a last level with two lists is counted by merging them (merge_window) instead
    of a binary search a candidate. Here every such level is merged whatever the lengths,
    lists have tails (tail_div 1: the windows stop at the end of the base, the other list's
    runs are merged one by one), re-insertions leave several entries of one neighbour; and
    in the second case every candidate's last level is walked alone, a level is offered to
    waiting warps at every step (donated merged levels start in mid-list), and each round
    of the other list is loaded before the last is tested (MERGE_PREFETCH). On a random
    graph, on a hub of 20,000 leaves, and on two hubs sharing 600 leaves (scanned lists of
    hundreds of entries: many windows a level, the cursors carried from window to window,
    levels long enough to donate), self-checks on (CHK_MERGE: every merged window against
    the binary searches): counts equal the CPU engine's, and levels were merged."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", defines)
    looks: list[tuple[dict[str, float], int]] = []

    def look(e: GpuEngine) -> None:
        looks.append((e.updater_profile(), e.stats()["donated"]))

    rng = np.random.default_rng(43)
    for g, stream in [*_random_and_hub(37), _two_hubs(rng, 600, 500)]:
        want = cpu_run(g, stream, PATTERNS, True)
        eng = GpuEngine(check=True, tail_div=1)
        got = run(eng, g, stream, PATTERNS, True, 150, before_close=look)  # type: ignore[arg-type]
        assert_same(got, want)
        prof, _ = looks[-1]
        assert prof["merged_levels"] > 0 and prof["appends"] > 0, prof
    if "DONATE_EVERY=1" in defines:
        assert looks[-1][1] > 0, looks[-1]  # the two hubs' long levels were handed on


@pytest.mark.parametrize("bitmaps", [-1, 2])
def test_hub_bitmaps_count_alike(bitmaps: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting, a last level whose membership tests read a list fixed for the whole item
    (the square's and the house's far end) tests it by bits in the warp's hub bitmap
    (executor.cuh, hub_bits_for) instead of searching it. Here every such list qualifies
    whatever its length or the item's range, lists have tails (tail_div 1), re-insertions
    leave several entries of one neighbour, and levels are offered to waiting warps at every
    step (donated items build bitmaps of their own). On a random graph, on a hub of 20,000
    leaves and on two hubs sharing 600 leaves, self-checks on (CHK_HUB_BITS: every bit test
    against the list's search): counts equal the CPU engine's, and bitmaps were built. With
    two bitmaps for all the executors, items share one built for their list or, finding
    neither it nor a free one, search instead."""
    defines = "-DHUB_BITS_MIN=1 -DHUB_BITS_DIV=1000000 -DDONATE_EVERY=1"
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", defines)
    profiles: list[dict[str, float]] = []

    def look(e: GpuEngine) -> None:
        profiles.append(e.updater_profile())

    rng = np.random.default_rng(47)
    for g, stream in [*_random_and_hub(41), _two_hubs(rng, 600, 500)]:
        want = cpu_run(g, stream, PATTERNS, True)
        eng = GpuEngine(check=True, tail_div=1, hub_bitmaps=bitmaps)
        got = run(eng, g, stream, PATTERNS, True, 150, before_close=look)  # type: ignore[arg-type]
        assert_same(got, want)
        assert profiles[-1]["hub_bitmaps"] > 0, profiles[-1]


def test_hub_bitmaps_for_a_query_registered_mid_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """A counting triangle launches the kernel without hub bitmaps (no level of it can use
    one); a counting square registered after that apply stops the kernel, and the next
    apply launches it with them. Self-checks on: counts equal the CPU engine's, and the
    square's items built bitmaps."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", "-DHUB_BITS_MIN=1 -DHUB_BITS_DIV=1000000")
    g, stream = _two_hubs(np.random.default_rng(53), 600, 500)
    seen: list[tuple[int, float]] = []

    def look(e: GpuEngine) -> None:
        seen.append((e.stats()["hub_slots"], e.updater_profile()["hub_bitmaps"]))

    def scenario(engine, gpu: bool):  # type: ignore[no-untyped-def]
        engine.load_graph(g)
        engine.register(0, TRIANGLE, from_seq=0, count_only=True)
        out = [engine.apply(stream.slice(0, 250))]
        if gpu:
            look(engine)
        engine.register(1, SQUARE, from_seq=250, count_only=True)
        out.append(engine.apply(stream.slice(250, 500)))
        if gpu:
            look(engine)
        engine.close()
        return out

    assert_same(scenario(GpuEngine(check=True), True), scenario(CpuEngine(), False))
    assert seen[0] == (0, 0) and seen[1][0] > 0 and seen[1][1] > 0, seen


@pytest.mark.parametrize("tail_div", [0, 8])
def test_short_path_copies_a_hub(tail_div: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The short path inserting into a hub's neighbour array of 50K entries (of 100K
    leaves), a few updates at a time: merged into a new run each time (tail_div 0), or
    appended as a tail in the hub's run, the base shared (8, the default), with the
    self-checks compiled in. Every batch takes the short path (no cost-model probes)."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", "-DSMALL_PROBE=1000000000")
    rng = np.random.default_rng(8)
    g = _hub_graph(rng, 100_000, on_hub=50_000)
    stream = _hub_stream(rng, 100_000, 300, 0.5)
    want = cpu_run(g, stream, [TRIANGLE], True)
    prof: dict[str, float] = {}
    eng = GpuEngine(batch_size=1, batch_cap=4, small_path=2, check=True, tail_div=tail_div)
    got = run(eng, g, stream, [TRIANGLE], True, 25,
              before_close=lambda e: prof.update(e.updater_profile()))  # fmt: skip
    assert_same(got, want)
    assert prof["small_batches"] == prof["batches"], prof
    assert (prof["appends"] > 0) == (tail_div > 0), prof


def test_register_and_unregister_at_exact_seq() -> None:
    rng = np.random.default_rng(3)
    g = random_graph(rng, nv=60, ne=300)
    stream = random_stream(rng, g, 600)

    def scenario(engine):  # type: ignore[no-untyped-def]
        engine.load_graph(g)
        engine.register(0, TRIANGLE, from_seq=0)
        engine.register(1, SQUARE, from_seq=137)  # in the middle of the first apply
        engine.unregister(0, from_seq=411)
        out = [engine.apply(stream.slice(0, 300)), engine.apply(stream.slice(300, 600))]
        engine.close()
        return out

    assert_same(scenario(GpuEngine(**SMALL)), scenario(CpuEngine()))
    seqs = canonical(scenario(GpuEngine(**SMALL)))["deltas"]
    assert seqs[seqs[:, 1] == 1, 0].min() >= 137
    assert seqs[seqs[:, 1] == 0, 0].max() < 411


def test_controls_dated_past_an_apply_wait_for_a_later_one() -> None:
    """A registration and an unregistration dated past the next apply wait while that
    apply's pieces go straight into the ring (none is due within them), then go in before
    their updates in the apply after: every delta equals the CPU engine's."""
    rng = np.random.default_rng(5)
    g = random_graph(rng, nv=60, ne=300)
    stream = random_stream(rng, g, 900)

    def scenario(engine):  # type: ignore[no-untyped-def]
        engine.load_graph(g)
        engine.register(0, TRIANGLE, from_seq=0)
        engine.register(1, SQUARE, from_seq=0)
        out = [engine.apply(stream.slice(0, 300))]
        engine.unregister(1, from_seq=650)
        engine.register(2, TRIANGLE, from_seq=700)
        out += [engine.apply(stream.slice(300, 600)), engine.apply(stream.slice(600, 900))]
        engine.close()
        return out

    got = scenario(GpuEngine(check=True, **SMALL))
    assert_same(got, scenario(CpuEngine()))
    seqs = canonical(got)["deltas"]
    assert seqs[seqs[:, 1] == 1, 0].max() < 650 and seqs[seqs[:, 1] == 2, 0].min() >= 700


@pytest.mark.parametrize("defines", ["", "-DBULK_MIN=32"])
def test_long_runs_read_by_the_updater_warps(defines: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of at least BULK_MIN waiting records goes into the batch read by all the updater
    warps together (read_run), not by warp 0 alone, and a control record inside the run
    ends the batch before it. Applies of 3,000 updates (each written, and copied to the
    device's mirror, at once), queries registered and unregistered in the middle of them,
    self-checks on: every delta equals the CPU engine's, and runs were read so."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", defines)
    rng = np.random.default_rng(21)
    g = random_graph(rng, nv=300, ne=3000)
    stream = random_stream(rng, g, 9000)
    prof: dict[str, float] = {}

    def scenario(engine, look=None):  # type: ignore[no-untyped-def]
        engine.load_graph(g)
        engine.register(0, TRIANGLE, from_seq=0)
        engine.register(1, SQUARE, from_seq=1337)
        engine.unregister(0, from_seq=4111)
        engine.register(2, TRIANGLE, from_seq=7000)
        out = [engine.apply(stream.slice(i, i + 3000)) for i in range(0, 9000, 3000)]
        if look is not None:
            look(engine)
        engine.close()
        return out

    got = scenario(GpuEngine(check=True, **SMALL), lambda e: prof.update(e.updater_profile()))
    assert_same(got, scenario(CpuEngine()))
    assert prof.get("step_input_run_us", 0) > 0, prof


def test_stop_and_relaunch_keep_the_graph() -> None:
    rng = np.random.default_rng(4)
    g = random_graph(rng, nv=80, ne=500)
    stream = random_stream(rng, g, 800)
    gpu = GpuEngine(**SMALL)
    gpu.load_graph(g)
    gpu.register(0, TRIANGLE, from_seq=0)
    parts = []
    for i in range(0, 800, 200):
        parts.append(gpu.apply(stream.slice(i, i + 200)))
        gpu.stop()
    want = cpu_run(g, stream, [TRIANGLE], False)
    assert_same(parts, want)
    cpu = CpuEngine()
    cpu.load_graph(g)
    cpu.apply(stream)
    assert edge_set(cpu.export_graph()) == edge_set(gpu.export_graph())


def test_device_times_map_onto_the_host_clock_by_pings() -> None:
    """A paced stream of 0.3 s: the kernel answers the host's clock pings while it runs, and
    with the mapping they give every update was taken after it entered the input ring and
    finished before the host read its completion, to within the mapping's slack and one
    tick of the device's clock (gpu/device_clock.py)."""
    rng = np.random.default_rng(12)
    g = random_graph(rng, nv=200, ne=1000)
    stream = random_stream(rng, g, 3000)
    eng = GpuEngine(**SMALL)
    eng.load_graph(g)
    eng.register(0, TRIANGLE, from_seq=0, count_only=True)
    eng.apply(stream.slice(0, 0))
    arrival = time.time() + 0.02 + np.arange(3000) * 1e-4
    part = stream.slice(0, 3000)
    eng.apply_paced(UpdateBatch.from_arrays(part.op, part.u, part.v, part.label, ts=arrival))
    line, clock = eng.last_timeline, eng.clock_report()
    eng.close()
    assert clock["answers"] >= 2
    assert clock["slack_us"] is not None and clock["slack_us"] < 25
    margin = (clock["slack_us"] + 2.0) * 1e-6
    assert (line["taken"] - line["entered"]).min() > -margin
    assert (line["seen"] - line["finished"]).min() > -margin


def test_pool_backpressure_and_recovery() -> None:
    """A pool far smaller than what the stream allocates over time: the updater must wait for
    the collector and still produce exact results."""
    rng = np.random.default_rng(9)
    g = random_graph(rng, nv=200, ne=800)
    stream = random_stream(rng, g, 20_000)
    want = cpu_run(g, stream, [TRIANGLE], True)
    eng = GpuEngine(pool_slabs=2048, max_versions=4096, max_vertices=1 << 12, out_cap=1 << 16)
    got = run(eng, g, stream, [TRIANGLE], True, 20_000)
    assert_same(got, want)


@pytest.mark.parametrize("seed", [9, 10])
def test_self_checks_hold_with_slow_jobs(seed: int) -> None:
    """The pool case again with the kernel's self-checks compiled in. Their outcome replay
    makes J_CLASSIFY tasks slow and their lanes diverge widely, which once exposed a task
    counted done before all of its lanes had written; the checks then also verify the slab
    and version pools, every new version, and each job's tasks."""
    rng = np.random.default_rng(seed)
    g = random_graph(rng, nv=200, ne=800)
    stream = random_stream(rng, g, 20_000)
    want = cpu_run(g, stream, [TRIANGLE], True)
    eng = GpuEngine(pool_slabs=2048, max_versions=4096, max_vertices=1 << 12, out_cap=1 << 16,
                    check=True)  # fmt: skip
    got = run(eng, g, stream, [TRIANGLE], True, 20_000)
    assert_same(got, want)


def test_pool_exhaustion_is_an_error_not_a_hang() -> None:
    rng = np.random.default_rng(10)
    g = random_graph(rng, nv=50, ne=100)
    eng = GpuEngine(pool_slabs=256, max_versions=4096, max_vertices=1 << 14, out_cap=1 << 16)
    eng.load_graph(g)
    eng.register(0, TRIANGLE, from_seq=0, count_only=True)
    n = 20_000  # far more live edges than 256 slabs hold
    u = rng.integers(0, 5000, n) + 10**6
    v = rng.integers(0, 5000, n) + 2 * 10**6
    with pytest.raises(EngineError, match="pool exhausted"):
        eng.apply(UpdateBatch.from_arrays(np.ones(n, np.int8), u, v))


@pytest.mark.parametrize("per_apply,piece", [(300, None), (1200, 64)])
def test_vertex_tables_grow_with_the_graph_and_the_stream(
    monkeypatch: pytest.MonkeyPatch, per_apply: int, piece: int | None
) -> None:
    """Capacity for 16 vertices at first: the load, then the applies, double the device
    vertex tables as the graph and the stream bring new vertices, between applies or (one
    apply of 1,200 updates sent in pieces of 64) within one; every delta as the CPU's."""
    if piece:
        monkeypatch.setattr(gpu_engine, "_PIECE", piece)
        monkeypatch.setattr(gpu_engine, "_PIECE_MAX", piece)
    rng = np.random.default_rng(13)
    g = random_graph(rng, nv=40, ne=160)
    stream = random_stream(rng, g, 1200, new_vertices=400)
    want = cpu_run(g, stream, PATTERNS, False)
    eng = GpuEngine(pool_slabs=1 << 14, max_vertices=16, max_versions=1 << 16, out_cap=1 << 20)
    sizes: list[int] = []
    got = run(eng, g, stream, PATTERNS, False, per_apply,
              before_close=lambda e: sizes.append(e.stats()["max_vertices"]))  # fmt: skip
    assert_same(got, want)
    assert sizes[0] >= 440 and sizes[0] & (sizes[0] - 1) == 0, sizes


def test_self_sized_pools_grow_with_the_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pools left at 0 are sized from the graph (here from floors of 1,024 slabs and
    versions) and grow, within an apply and between applies, as a stream that is mostly
    insertions outgrows them; self-checks on, every delta as the CPU's."""
    monkeypatch.setattr(pools, "MIN_SLABS", 1024)
    monkeypatch.setattr(pools, "MIN_VERSIONS", 1024)
    # Pieces of 256 updates (the host looks at the pools before each), batches of at most
    # 64, an input ring of 256 records and 128 update slots: the room the pools keep for
    # what the host may send ahead stays below the stream's growth.
    monkeypatch.setattr(gpu_engine, "_PIECE", 256)
    monkeypatch.setattr(gpu_engine, "_PIECE_MAX", 256)
    g, stream = growing_workload()
    want = cpu_run(g, stream, [TRIANGLE], False)
    eng = GpuEngine(batch_cap=64, maxu=128, in_cap=256, max_vertices=1 << 12, out_cap=1 << 20,
                    check=True)  # fmt: skip
    loaded: list[dict[str, int]] = []
    load = eng.load_graph

    def load_and_look(graph: Graph) -> None:
        load(graph)
        loaded.append(eng.stats())

    eng.load_graph = load_and_look  # type: ignore[method-assign]
    seen: list[dict[str, int]] = []
    got = run(eng, g, stream, [TRIANGLE], False, 8000,
              before_close=lambda e: seen.append(e.wait_collected()))  # fmt: skip
    assert_same(got, want)
    s, first = seen[0], loaded[0]
    assert s["pool_slabs"] > first["pool_slabs"], (first, s)  # grew with the stream
    assert s["max_versions"] > first["max_versions"], (first, s)
    assert s["slabs_in_use"] > 1024 and s["versions_in_use"] > 1024, s  # past the floors


def test_hub_bitmaps_give_the_pool_back_as_it_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hub bitmaps are carved from the top of a self-sized slab pool (pools.hub_room) while
    a counting square is registered; as the stream outgrows the pool, a look gives their
    slabs back before it decides on growth, and the next launch carves again from what is
    then free. Self-checks on (CHK_HUB_BITS): counts equal the CPU engine's, bitmaps were
    carved and built, a look gave carved slabs back, and the pool grew past its size at
    the load."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", "-DHUB_BITS_MIN=1 -DHUB_BITS_DIV=1000000")
    monkeypatch.setattr(pools, "MIN_SLABS", 1024)
    monkeypatch.setattr(pools, "MIN_VERSIONS", 1024)
    monkeypatch.setattr(gpu_engine, "_PIECE", 256)
    monkeypatch.setattr(gpu_engine, "_PIECE_MAX", 256)
    g, stream = growing_workload(seed=21)
    want = cpu_run(g, stream, [TRIANGLE, SQUARE], True)
    eng = GpuEngine(batch_cap=64, maxu=128, in_cap=256, max_vertices=1 << 12, out_cap=1 << 20,
                    check=True)  # fmt: skip
    loaded: list[int] = []
    carves: list[int] = []  # slabs carved at each carve
    given_back: list[int] = []  # slabs carved when a drop gave them back
    load, carve, drop = eng.load_graph, eng._set_hub_bits, eng._drop_hub_bits

    def load_and_look(graph: Graph) -> None:
        load(graph)
        loaded.append(eng.stats()["pool_slabs"])

    def carve_and_look(words: int, slots: int) -> None:
        carve(words, slots)
        carves.append(eng._hub_carved)

    def drop_and_look() -> None:
        given_back.append(eng._hub_carved)
        drop()

    eng.load_graph = load_and_look  # type: ignore[method-assign]
    eng._set_hub_bits = carve_and_look  # type: ignore[method-assign]
    eng._drop_hub_bits = drop_and_look  # type: ignore[method-assign]
    seen: list[tuple[dict[str, int], dict[str, float]]] = []
    got = run(eng, g, stream, [TRIANGLE, SQUARE], True, 2000,
              before_close=lambda e: seen.append((e.stats(), e.updater_profile())))  # fmt: skip
    assert_same(got, want)
    stats, profile = seen[0]
    assert max(carves) > 0 and max(given_back) > 0, (carves, given_back)
    assert stats["pool_slabs"] > loaded[0], (loaded, stats)
    assert profile["hub_bitmaps"] > 0, profile


def test_compacting_at_every_look_keeps_every_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slab pool compacted whenever the engine looks at its pools (COMPACT_SHARE 0):
    owned runs move to the front while a stream grows arrays and retires versions, with
    self-checks on (each run's owner checked when it is taken and freed); every delta and
    the final graph as the CPU's."""
    monkeypatch.setattr(pools, "MIN_SLABS", 1024)
    monkeypatch.setattr(pools, "MIN_VERSIONS", 1024)
    monkeypatch.setattr(pools, "COMPACT_SHARE", 0.0)
    monkeypatch.setattr(gpu_engine, "_PIECE", 256)
    monkeypatch.setattr(gpu_engine, "_PIECE_MAX", 256)
    g, stream = growing_workload(seed=16)
    want = cpu_run(g, stream, [TRIANGLE], False)
    eng = GpuEngine(batch_cap=64, maxu=128, in_cap=256, max_vertices=1 << 12, out_cap=1 << 20,
                    check=True, pool_compact=1)  # fmt: skip
    seen: list[tuple[dict[str, int], set[tuple[int, int]]]] = []

    def look(e: GpuEngine) -> None:
        seen.append((e.stats(), edge_set(e.export_graph())))

    got = run(eng, g, stream, [TRIANGLE], False, 8000, before_close=look)  # type: ignore[arg-type]
    assert_same(got, want)
    stats, edges = seen[0]
    assert stats["pool_compactions"] > 0, stats
    cpu = CpuEngine()
    cpu.load_graph(g)
    cpu.apply(stream)
    assert edges == edge_set(cpu.export_graph())


@pytest.mark.parametrize("tail_div", [0, 1, 8])
def test_tails_appended_and_merged(tail_div: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists as a base plus a tail (docs/delta-lists.md): with tail_div 1 most batches
    append, with 8 (the default) long lists do, with 0 none does. A random stream on a
    dense graph (embeddings) and one on a hub (counts), the short path and the job
    pipeline interleaved (SMALL_PROBE=2: the short path appends to lists and merges lists
    that have tails),
    deletions in bases and in tails, self-checks on (a kept run's owner moves to its
    successor): every delta, and the final graph, as the CPU engine's; the profile counts
    the appends."""
    monkeypatch.setenv("DCSM_KERNEL_DEFINES", "-DSMALL_PROBE=2")
    rng = np.random.default_rng(41)
    dense = random_graph(rng, nv=50, ne=700)
    cases = [
        (dense, random_stream(rng, dense, 1500), 24, 200, False),
        (_hub_graph(rng, 20_000), _hub_stream(rng, 20_000, 900, 0.4), 16, 300, True),
    ]
    seen: list[tuple[dict[str, float], set[tuple[int, int]]]] = []

    def look(e: GpuEngine) -> None:
        seen.append((e.updater_profile(), edge_set(e.export_graph())))

    for g, stream, cap, chunk, count_only in cases:
        want = cpu_run(g, stream, PATTERNS, count_only)
        # pools sized from the graph
        eng = GpuEngine(batch_size=8, batch_cap=cap, check=True, tail_div=tail_div)
        got = run(eng, g, stream, PATTERNS, count_only, chunk, before_close=look)  # type: ignore[arg-type]
        assert_same(got, want)
        cpu = CpuEngine()
        cpu.load_graph(g)
        cpu.apply(stream)
        prof, edges = seen[-1]
        assert edges == edge_set(cpu.export_graph())
        assert prof["new_runs"] > 0 and prof["small_batches"] > 0, prof
        assert (prof["appends"] > 0) == (tail_div > 0), prof


def test_update_slots_wait_for_the_collector() -> None:
    """An update slot (tau mod maxu) is taken again only once the collector has passed its
    previous occupant: with a ring of 256 slots and batches of 64, the collector lags more
    than a ring behind, and a slot taken before it passed would stop the GC pointer for
    good (found at 43M edges with batches of 16,384: the pool filled with garbage and the
    kernel waited forever). Every delta as the CPU's."""
    g, stream = growing_workload(seed=15)
    want = cpu_run(g, stream, [TRIANGLE], False)
    eng = GpuEngine(batch_cap=64, maxu=256, max_vertices=1 << 12, out_cap=1 << 20, check=True)
    seen: list[dict[str, int]] = []
    got = run(eng, g, stream, [TRIANGLE], False, 6000,
              before_close=lambda e: seen.append(e.wait_collected()))  # fmt: skip
    assert_same(got, want)
    s = seen[0]
    assert s["completed"] > 4 * 256 and s["gc_ptr"] == s["completed"] + 1, s  # all passed
    assert s["gc_queue"] == 0, s


def test_graph_larger_than_pool_is_rejected() -> None:
    rng = np.random.default_rng(12)
    g = random_graph(rng, nv=5000, ne=50_000)
    with pytest.raises(EngineError, match="pool_slabs"):
        GpuEngine(pool_slabs=64, max_vertices=1 << 14, max_versions=1 << 14).load_graph(g)
