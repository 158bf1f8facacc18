"""How the GPU engine sizes and grows its device tables (gpu/pools.py), run on numpy arrays:
the same functions move the device's buffers with cupy (no GPU needed here)."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.gpu import pools

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
                          ("free_tail", np.uint64, NCLASS)])  # fmt: skip
        self.st = st[0]
        self.d = {
            "entries": np.zeros((nslabs * 32, 4), np.int32),
            "slab_owner": np.full(nslabs, -1, np.int32),
            "slab_free": np.zeros(pools.ring_words(nslabs, NCLASS), np.int32),
        }
        self.live: dict[int, tuple[int, int]] = {}  # run start -> (class, owner)

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
