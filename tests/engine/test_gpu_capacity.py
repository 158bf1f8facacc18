"""How the GPU engine sizes and grows its device tables (gpu/pools.py), run on numpy arrays:
the same functions move the device's buffers with cupy (no GPU needed here)."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.engine.plan import orbit_plans, plan_query
from dcsm.gpu import engine as gpu_engine
from dcsm.gpu import pools
from dcsm.gpu.mvg import V_CLS, V_KEPT, V_SLAB, VERSION_INTS
from dcsm.model import Pattern

NCLASS = 4


def test_a_first_capacity_has_headroom_and_a_floor() -> None:
    assert pools.sized(0, pools.MIN_SLABS) == pools.MIN_SLABS
    for live in (10**5, 724_314, 7_000_000):
        cap = pools.sized(live, pools.MIN_SLABS)
        assert cap % pools.ROUND == 0
        assert live * pools.HEADROOM <= cap < live * pools.HEADROOM + pools.ROUND
        assert not pools.worth_a_look(live, cap)  # a fresh load is well below the mark
    # Room for one kernel batch of 4,096 updates (8,192 vertices) comes on top.
    cap = pools.sized(100, 1024, reserve=8192)
    assert cap >= 8292 * pools.HEADROOM and not pools.worth_a_look(100, cap, reserve=8192)


@pytest.mark.parametrize("cap", [1 << 16, 1_000_448, 10_000_384])
def test_growth_keeps_allocation_within_twice_what_is_live(cap: int) -> None:
    """The engine grows a pool only when what is live after collection passes LIVE_WATER;
    the new capacity then holds at most 2x what is live and is itself below the marks."""
    for live in np.linspace(pools.LIVE_WATER * cap + 1, cap, 7).astype(int):
        assert pools.must_grow(int(live), cap)
        new = pools.grown_to(cap, int(live))
        assert new >= cap * pools.GROWTH
        assert new <= 2 * live + pools.ROUND
        assert not pools.must_grow(int(live), new)
        assert not pools.worth_a_look(int(live), new)


def test_a_pool_full_only_by_its_bump_region_is_compacted_not_grown() -> None:
    """Freed runs go back to their own class's ring, so the bump pointer climbs above what
    is live: a pool whose bump region alone passes the high-water mark is compacted (one
    move) instead of grown (a larger copy, and 1.3x the bytes); one whose live part passes
    the live-water mark grows. ``pool_compact`` (always) compacts at a smaller gap too."""
    cap, rs = 1000, 50
    assert pools.compact_first(560, 850, cap, rs, always=False)  # bump 900 of 1000 with rs
    assert not pools.compact_first(700, 850, cap, rs, always=False)  # live 750 > 700: grow
    assert not pools.compact_first(400, 700, cap, rs, always=False)  # below every mark
    assert pools.compact_first(400, 700, cap, rs, always=True)  # a gap of 300 > 200
    assert not pools.compact_first(400, 500, cap, rs, always=True)  # a gap of 100


def test_the_slab_reserve_counts_the_largest_runs() -> None:
    """A piece of updates may copy the arrays of the vertices it touches: the reserve counts
    the k largest runs (2^cls slabs each), or all of them when there are fewer."""
    cls = np.array([0, 3, 10, 1, 10, 5, 0], np.int32)
    assert pools.largest_runs(np, cls, 2) == 2 * 1024
    assert pools.largest_runs(np, cls, 3) == 2 * 1024 + 32
    assert pools.largest_runs(np, cls, 100) == 1 + 8 + 1024 + 2 + 1024 + 32 + 1
    assert pools.largest_runs(np, cls[:0], 4) == 0


def test_a_ring_keeps_its_elements_in_order_across_a_move() -> None:
    src = np.arange(100, 108, dtype=np.int32)  # slots of an 8-slot ring
    dst = np.full(32, -1, np.int32)
    head, tail = 13, 19  # elements 13..18 sit in slots 5, 6, 7, 0, 1, 2
    pools.move_ring(np, src, 0, 8, dst, 4, 20, head, tail)
    assert [dst[4 + k % 20] for k in range(head, tail)] == [src[k % 8] for k in range(head, tail)]
    assert (np.delete(dst, [4 + k % 20 for k in range(head, tail)]) == -1).all()


class SlabPoolModel:
    """The kernel's use of the slab pool, on the host: per class, a free ring that the
    updater pops from its head and the collector pushes onto its tail, and a bump region."""

    def __init__(self, nslabs: int, rng: np.random.Generator) -> None:
        self.n = nslabs
        self.rng = rng
        st = np.zeros(1, [("slab_bump", np.uint64), ("free_head", np.uint64, NCLASS),
                          ("free_tail", np.uint64, NCLASS), ("slabs_in_use", np.uint64),
                          ("ver_bump", np.uint64), ("ver_free_head", np.uint64),
                          ("ver_free_tail", np.uint64)])  # fmt: skip
        self.st = st[0]
        self.d = {
            "entries": np.zeros((nslabs * 32, 4), np.int32),
            "slab_owner": np.full(nslabs, -1, np.int32),
            "slab_free": np.zeros(pools.ring_words(nslabs, NCLASS), np.int32),
        }
        self.live: dict[int, tuple[int, int]] = {}  # run start -> (class, owner)
        self.taken: dict[int, tuple[int, int]] = {}  # owner -> (run start, class), ever

    def take(self, cls: int, owner: int) -> int:
        h, t = int(self.st["free_head"][cls]), int(self.st["free_tail"][cls])
        if t > h:
            slab = int(self.d["slab_free"][pools.class_base(self.n, cls) + h % (self.n >> cls)])
            self.st["free_head"][cls] = h + 1
        else:
            slab = int(self.st["slab_bump"])
            assert slab + (1 << cls) <= self.n, "the model's pool is full"
            self.st["slab_bump"] = slab + (1 << cls)
        self.d["slab_owner"][slab] = owner
        self.d["entries"][slab * 32 : (slab + (1 << cls)) * 32] = owner
        self.live[slab] = (cls, owner)
        self.taken[owner] = (slab, cls)
        return slab

    def give_back(self, slab: int) -> None:
        cls, _ = self.live.pop(slab)
        t = int(self.st["free_tail"][cls])
        self.d["slab_free"][pools.class_base(self.n, cls) + t % (self.n >> cls)] = slab
        self.d["slab_owner"][slab] = -1
        self.st["free_tail"][cls] = t + 1

    def churn(self, rounds: int, first_owner: int) -> None:
        for i in range(rounds):
            self.take(int(self.rng.integers(0, NCLASS)), first_owner + i)
            while len(self.live) > 8:
                self.give_back(int(self.rng.choice(list(self.live))))

    def free_runs(self) -> dict[int, list[int]]:
        out = {}
        for c in range(NCLASS):
            h, t = int(self.st["free_head"][c]), int(self.st["free_tail"][c])
            base, cap = pools.class_base(self.n, c), self.n >> c
            out[c] = [int(self.d["slab_free"][base + k % cap]) for k in range(h, t)]
        return out

    def check_live(self) -> None:
        for slab, (cls, owner) in self.live.items():
            assert self.d["slab_owner"][slab] == owner
            assert (self.d["entries"][slab * 32 : (slab + (1 << cls)) * 32] == owner).all()


def test_a_grown_slab_pool_holds_every_live_run_and_every_free_one_in_ring_order() -> None:
    pool = SlabPoolModel(256, np.random.default_rng(5))
    pool.churn(300, first_owner=1)
    assert min(int(t) for t in pool.st["free_tail"]) > 256 >> (NCLASS - 1)  # rings wrapped
    free_before = pool.free_runs()
    pools.grow_slab_pool(np, pool.d, pool.st, 256, 1000, NCLASS)
    pool.n = 1000
    assert pool.d["entries"].shape == (1000 * 32, 4)
    assert pool.free_runs() == free_before
    pool.check_live()
    assert (pool.d["slab_owner"][256:] == -1).all()
    pool.churn(300, first_owner=1000)  # and it goes on working at its new size
    pool.check_live()


def versions_of(m: SlabPoolModel, maxver: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's version table and ver_free ring for the model's versions: every version
    ever taken holds its run and class; the freed ones sit in the ring from ``head`` on, and
    the ring's other slots hold live ids (stale slots that must not count)."""
    vers = np.zeros((maxver, VERSION_INTS), np.int32)
    for owner, (slab, cls) in m.taken.items():
        vers[owner, V_SLAB], vers[owner, V_CLS] = slab, cls
    live = {owner for _cls, owner in m.live.values()}
    freed = [o for o in m.taken if o not in live]
    ring = np.full(maxver, min(live), np.int32)
    for k, o in enumerate(freed):
        ring[(head + k) % maxver] = o
    m.st["ver_bump"] = len(m.taken)
    m.st["ver_free_head"], m.st["ver_free_tail"] = head, head + len(freed)
    m.st["slabs_in_use"] = sum(1 << cls for cls, _o in m.live.values())
    return vers, ring


def test_compaction_packs_every_owned_run_at_the_front_in_pool_order() -> None:
    """After a churn of runs of every class, the bump pointer stands far above what is
    live; compaction moves each owned run (entries, its version's slab, its owner word) to
    the front in pool order, and every free ring is empty: the rest is bump region."""
    m = SlabPoolModel(1024, np.random.default_rng(6))
    m.churn(400, first_owner=0)
    m.take(3, 400)  # a run from the bump region: the live runs span the pool
    vers, ring = versions_of(m, maxver=512, head=700)
    m.d.update(vers=vers, ver_free=ring)
    before = vers.copy()
    assert int(m.st["slab_bump"]) > 2 * int(m.st["slabs_in_use"])
    total = pools.compact_slab_pool(np, m.d, m.st, chunk=5)  # chunks cut through runs
    assert total == int(m.st["slabs_in_use"]) == int(m.st["slab_bump"])
    assert (m.st["free_head"] == m.st["free_tail"]).all()
    at = 0
    for _old, (cls, owner) in sorted(m.live.items()):
        assert vers[owner, V_SLAB] == at and m.d["slab_owner"][at] == owner
        assert (m.d["entries"][at * 32 : (at + (1 << cls)) * 32] == owner).all()
        at += 1 << cls
    assert at == total
    assert (m.d["slab_owner"][total:] == -1).all()
    live = {owner for _cls, owner in m.live.values()}
    freed = [o for o in m.taken if o not in live]
    assert freed and (vers[freed] == before[freed]).all()  # a free version's row stays


def test_compaction_moves_a_kept_version_with_the_run_it_shares() -> None:
    """A retired version whose successor appended a tail in its run (``kept``) owns no run:
    it is not counted, and it moves with the run it shares; one whose owner is gone stops
    the compaction."""
    m = SlabPoolModel(512, np.random.default_rng(8))
    m.churn(200, first_owner=0)
    vers, ring = versions_of(m, maxver=512, head=300)
    owner = sorted(o for _c, o in m.live.values())[-1]
    kept = len(m.taken)  # a version id past every model version
    vers[kept] = vers[owner]
    vers[kept, V_KEPT] = 1
    m.st["ver_bump"] = kept + 1
    m.d.update(vers=vers, ver_free=ring)
    vers[kept, V_SLAB] = int(m.st["slab_bump"]) + 1  # no owner there
    entries = m.d["entries"].copy()
    with pytest.raises(RuntimeError, match="no owner"):
        pools.compact_slab_pool(np, m.d, m.st)
    assert (m.d["entries"] == entries).all()  # refused before anything moved
    vers[kept, V_SLAB] = vers[owner, V_SLAB]
    pools.compact_slab_pool(np, m.d, m.st)
    assert vers[kept, V_SLAB] == vers[owner, V_SLAB]
    assert m.d["slab_owner"][vers[owner, V_SLAB]] == owner


def test_compaction_refuses_a_pool_whose_books_do_not_balance() -> None:
    m = SlabPoolModel(256, np.random.default_rng(7))
    m.churn(100, first_owner=0)
    vers, ring = versions_of(m, maxver=256, head=3)
    m.d.update(vers=vers, ver_free=ring)
    m.st["slabs_in_use"] += 1
    entries = m.d["entries"].copy()
    with pytest.raises(RuntimeError, match="do not balance"):
        pools.compact_slab_pool(np, m.d, m.st)
    assert (m.d["entries"] == entries).all()


def test_a_grown_version_table_keeps_versions_free_ring_and_gc_queue() -> None:
    old, new = 8, 20
    st = np.zeros(1, [("ver_bump", np.uint64), ("ver_free_head", np.uint64),
                      ("ver_free_tail", np.uint64), ("gcq_head", np.uint64),
                      ("gcq_tail", np.uint64)])[0]  # fmt: skip
    st["ver_bump"], st["ver_free_head"], st["ver_free_tail"] = 8, 21, 25
    st["gcq_head"], st["gcq_tail"] = 6, 11
    d = {
        "vers": np.arange(old * 8, dtype=np.int32).reshape(old, 8),
        "ver_free": np.arange(50, 50 + old, dtype=np.int32),
        "gcq": np.arange(70, 70 + old, dtype=np.int32),
    }
    free_before = [d["ver_free"][k % old] for k in range(21, 25)]
    gcq_before = [d["gcq"][k % old] for k in range(6, 11)]
    vers_before = d["vers"].copy()
    pools.grow_version_table(np, d, st, old, new)
    assert (d["vers"][:old] == vers_before).all() and (d["vers"][old:] == 0).all()
    assert [d["ver_free"][k % new] for k in range(21, 25)] == free_before
    assert [d["gcq"][k % new] for k in range(6, 11)] == gcq_before


def test_grown_vertex_tables_keep_their_rows_and_fill_the_rest() -> None:
    d = {name: np.arange(4, dtype=np.int64 if name == "ext" else np.int32)
         for name in pools.VERTEX_TABLES}  # fmt: skip
    pools.grow_vertex_tables(np, d, 10)
    for name, fill in pools.VERTEX_TABLES.items():
        assert d[name].tolist() == [0, 1, 2, 3] + [fill] * 6


def test_the_warm_up_runs_every_growth_and_a_compaction_on_tiny_tables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the engine runs at construction so that no CuPy kernel compiles mid-stream; the
    compaction meets a kept version and a freed one (each branch launches its kernels)."""
    from dcsm.gpu.layout import KernelConfig, state_dtype
    from dcsm.gpu.mvg import V_KEPT

    ran: list[str] = []
    met: list[tuple[int, int]] = []
    for name in ("grow_slab_pool", "grow_version_table", "grow_vertex_tables",
                 "compact_slab_pool"):  # fmt: skip
        real = getattr(pools, name)
        monkeypatch.setattr(
            pools, name, lambda *a, _r=real, _n=name, **k: (ran.append(_n), _r(*a, **k))[1]
        )
    real_compact = pools.compact_slab_pool

    def compact(xp, d, st, *a):  # type: ignore[no-untyped-def]
        kept = int((d["vers"][: int(st["ver_bump"]), V_KEPT] != 0).sum())
        met.append((kept, int(st["ver_free_tail"]) - int(st["ver_free_head"])))
        return real_compact(xp, d, st, *a)

    monkeypatch.setattr(pools, "compact_slab_pool", compact)
    cfg = KernelConfig()
    d = {name: np.zeros(4, np.int32) for name in pools.VERTEX_TABLES}
    d.update(entries=np.zeros((64, 4), np.int32), slab_owner=np.zeros(2, np.int32),
             slab_free=np.zeros(8, np.int32), vers=np.zeros((2, VERSION_INTS), np.int32),
             ver_free=np.zeros(2, np.int32), gcq=np.zeros(2, np.int32))  # fmt: skip
    pools.warm_up(np, d, np.zeros(1, state_dtype(cfg))[0], cfg.nclass)
    assert ran == ["grow_slab_pool", "grow_version_table", "grow_vertex_tables",
                   "compact_slab_pool"]  # fmt: skip
    assert met == [(1, 1)]


def test_an_apply_goes_in_pieces_within_the_bounds() -> None:
    """A short apply goes in pieces of _PIECE (the device starts on its first early), a long
    one in _PIECES pieces (one more for the rest of a division), none over _PIECE_MAX
    (what the hub reserve counts)."""
    for n in (1, 4096, 28_900, 65_536, 65_551, 100_000, 1 << 20, 1 << 24):
        piece = gpu_engine.piece_size(n)
        assert gpu_engine._PIECE <= piece <= gpu_engine._PIECE_MAX
        pieces = -(-n // piece)
        assert pieces <= max(gpu_engine._PIECES + 1, -(-n // gpu_engine._PIECE_MAX)), (n, piece)
        if n <= gpu_engine._PIECE * gpu_engine._PIECES:
            assert piece == gpu_engine._PIECE


def test_pieces_cover_an_apply_in_order_with_a_smaller_first_one() -> None:
    """piece_bounds: consecutive (lo, hi) from 0 to n, each of ``piece`` updates but the
    last, the first of at most ``first`` when it is given."""
    assert list(gpu_engine.piece_bounds(0, 4096)) == []
    assert list(gpu_engine.piece_bounds(5, 4096, 1024)) == [(0, 5)]
    assert list(gpu_engine.piece_bounds(10_000, 4096)) == [(0, 4096), (4096, 8192), (8192, 10_000)]
    assert list(gpu_engine.piece_bounds(10_000, 4096, 1024)) == [
        (0, 1024), (1024, 5120), (5120, 9216), (9216, 10_000)
    ]  # fmt: skip
    assert list(gpu_engine.piece_bounds(9000, 4096, 8192)) == [(0, 4096), (4096, 8192),
                                                               (8192, 9000)]  # fmt: skip


def test_hub_bitmaps_are_sized_to_the_graph_and_the_pools_free_room() -> None:
    """One bit a vertex, rounded up to 65,536 vertices; one an executor warp unless fewer
    are asked for; carved from two thirds of the slab pool's room above its look threshold,
    so that the stream has the rest before the engine looks, and none when the graph's runs
    (and the reserves) leave no room."""
    cap, bump, reserve = 11_586_560, 6_270_946, 1_453_427  # the 43M graph, loaded
    room = pools.hub_room(cap, bump, reserve)
    look = -(-(bump + reserve) * 100 // 85)
    assert room == (cap - look) * 2 // 3
    words, count = pools.hub_bitmaps(4_800_000, 3168, -1, room * pools.SLAB_ENTRY_BYTES)
    assert words == 4_849_664 // 32 and count == 1407  # 853 MB of the pool's 6.1 GB
    carved = pools.hub_slabs(words, count)
    assert carved == -(-count * words * 4 // (32 * 16))  # whole slabs of 32 16-byte entries
    assert carved <= room and not pools.worth_a_look(bump, cap - carved, reserve)
    assert pools.hub_room(cap, 9_500_000, reserve) == 0
    assert pools.hub_bitmaps(0, 3168, -1, 1 << 40) == (2048, 3168)
    assert pools.hub_bitmaps(100, 3168, 2, 1 << 40) == (2048, 2)
    assert pools.hub_bitmaps(100, 3168, 0, 1 << 40)[1] == 0
    assert pools.hub_bitmaps(100, 64, 100_000, 1 << 40)[1] == 64
    assert pools.hub_bitmaps(100, 64, -1, 8192 * 3 - 1)[1] == 2


def _ring(n: int) -> Pattern:
    return Pattern.build(f"c{n}", [None] * n, [(i, (i + 1) % n, None) for i in range(n)])


def _clique(n: int) -> Pattern:
    edges = [(i, j, None) for i in range(n) for j in range(i + 1, n)]
    return Pattern.build(f"k{n}", [None] * n, edges)


@pytest.mark.parametrize(
    ("pattern", "can"),
    [(_clique(3), False), (_ring(4), True), (_clique(4), False), (_ring(5), True),
     (Pattern.build("p4", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None)]), False)],
)  # fmt: skip
def test_which_queries_can_use_hub_bitmaps(pattern: Pattern, can: bool) -> None:
    """A counting query gets hub bitmaps (and a running kernel without them is stopped for
    them) only when an item of one of its plans can test its last level by one: two
    backward neighbours there, one fixed before the item's level. Not a triangle (no level
    between the update's ends and the last), a 4-clique (three) or a path (one)."""
    assert gpu_engine.uses_hub_bits(orbit_plans(plan_query(pattern))) is can
