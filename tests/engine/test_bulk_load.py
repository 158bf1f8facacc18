"""Bulk load (dcsm/engine/bulk.py) against the numbering rule written out with np.unique,
and both engines' load results (CPU pool, GPU bulk image) against straightforward
constructions of the same structures."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.engine import bulk, idtable
from dcsm.engine.bulk import intern_graph, sort_edges
from dcsm.engine.cpu import CpuEngine
from dcsm.errors import EngineError
from dcsm.gpu.layout import INF_TS
from dcsm.gpu.mvg import (
    V_CLS,
    V_DT_MAX,
    V_LEN,
    V_PREV,
    V_SLAB,
    V_X,
    build_image,
    fill_entries,
    live_edges,
)
from dcsm.model import Graph


def reference_intern(graph: Graph) -> tuple[np.ndarray, ...]:
    """The rule, spelled out: declared vertices in their order, then the undeclared
    endpoints ascending; edges as (lo, hi) internal ids, self loops dropped, each pair once
    with its first label, sorted."""
    declared = graph.vertex_ids.astype(np.int64)
    endpoints = np.unique(np.concatenate([graph.src, graph.dst]).astype(np.int64))
    extra = endpoints[~np.isin(endpoints, declared)]
    ext = np.concatenate([declared, extra])
    vlab = np.concatenate([graph.vertex_labels.astype(np.int32), np.zeros(len(extra), np.int32)])
    index = {x: i for i, x in enumerate(ext.tolist())}
    first: dict[tuple[int, int], int] = {}
    for s, d, lab in zip(graph.src.tolist(), graph.dst.tolist(), graph.edge_labels.tolist(),
                         strict=True):  # fmt: skip
        a, b = index[s], index[d]
        if a != b:
            first.setdefault((min(a, b), max(a, b)), lab)
    pairs = sorted(first)
    lo = np.array([p[0] for p in pairs], np.int32)
    hi = np.array([p[1] for p in pairs], np.int32)
    lab = np.array([first[p] for p in pairs], np.int32)
    return ext, vlab, lo, hi, lab


def random_graph(rng: np.random.Generator, sparse: bool, n: int = 150, m: int = 700) -> Graph:
    """Some ids declared (shuffled), some only used by edges; repeated pairs both ways
    with other labels; self loops (one on an otherwise unused id)."""
    if sparse:
        ids = np.unique(rng.integers(-(2**62), 2**62, n))
        ids[:2] = [np.iinfo(np.int64).max, 0]
    else:
        ids = np.unique(rng.integers(10**12, 10**12 + 2 * n, n))
    ids = ids[rng.permutation(len(ids))]
    nd = int(rng.integers(0, len(ids) + 1))
    src = rng.choice(ids, m)
    dst = rng.choice(ids, m)
    rep = rng.integers(0, m, m // 5)
    src, dst = np.concatenate([src, dst[rep], [77, 78]]), np.concatenate([dst, src[rep], [77, 5]])
    loops = rng.integers(0, len(src), 20)
    dst[loops] = src[loops]
    dst[-2] = 77  # an id seen only in a self loop still becomes a vertex
    return Graph(
        ids[:nd], rng.integers(0, 4, nd).astype(np.int32), src, dst,
        rng.integers(0, 9, len(src)).astype(np.int32),
    )  # fmt: skip


@pytest.mark.parametrize("parts", [1, 3, 8])
@pytest.mark.parametrize("sparse", [False, True])
def test_numbering_and_edges_follow_the_rule(
    monkeypatch: pytest.MonkeyPatch, parts: int, sparse: bool
) -> None:
    """Dense ids take the direct-array path, sparse ones the hash table; ``parts`` splits
    every owner scan (and the table build) as that many threads would."""
    monkeypatch.setattr(bulk, "_threads", lambda n: parts)
    monkeypatch.setattr(idtable, "_threads", lambda n: parts)
    rng = np.random.default_rng(10 * parts + sparse)
    for _ in range(12):
        g = random_graph(rng, sparse)
        ext, vlab, lo, hi, lab = reference_intern(g)
        got = intern_graph(g)
        assert got.ext.tolist() == ext.tolist()
        assert got.vlab.tolist() == vlab.tolist()
        assert got.lo.tolist() == lo.tolist() and got.hi.tolist() == hi.tolist()
        assert got.elab.tolist() == lab.tolist()
        assert got.start.tolist() == np.searchsorted(lo, np.arange(len(ext) + 1)).tolist()
        assert got.ids.lookup(ext).tolist() == list(range(len(ext)))
        assert 77 in got.ext.tolist()


def test_edge_cases() -> None:
    empty = intern_graph(Graph.empty())
    assert empty.num_vertices == 0 and empty.num_edges == 0 and empty.start.tolist() == [0]
    only_vertices = intern_graph(
        Graph(
            np.array([3, 1], np.int64),
            np.array([1, 2], np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int32),
        )  # fmt: skip
    )
    assert only_vertices.ext.tolist() == [3, 1] and only_vertices.start.tolist() == [0, 0, 0]
    undeclared = intern_graph(
        Graph(
            np.zeros(0, np.int64),
            np.zeros(0, np.int32),
            np.array([9, 4, 4]),
            np.array([4, 9, 4]),
            np.array([5, 6, 7], np.int32),
        )  # fmt: skip
    )
    assert undeclared.ext.tolist() == [4, 9] and undeclared.elab.tolist() == [5]
    for ids in ([5, 6, 5], [2**62, 7, 2**62]):  # direct-array and hash-table paths
        g = Graph(np.array(ids, np.int64), np.zeros(3, np.int32), np.zeros(0, np.int64),
                  np.zeros(0, np.int64), np.zeros(0, np.int32))  # fmt: skip
        with pytest.raises(EngineError, match="declares a vertex id twice"):
            intern_graph(g)
        with pytest.raises(EngineError, match="declares a vertex id twice"):
            CpuEngine().load_graph(g)


def test_sort_edges_of_any_order_and_the_large_path() -> None:
    """Above 64K edges the default thread count runs (the engines' real path)."""
    rng = np.random.default_rng(4)
    nv, m = 20000, 150000
    a = rng.integers(0, nv, m).astype(np.int32)
    b = rng.integers(0, nv, m).astype(np.int32)
    a[:100] = b[:100]
    lab = rng.integers(0, 5, m).astype(np.int32)
    start, lo, hi, elab = sort_edges(a, b, lab, nv)
    key = np.minimum(a, b).astype(np.int64) * nv + np.maximum(a, b)
    keep = a != b
    want, first = np.unique(key[keep], return_index=True)
    assert (lo.astype(np.int64) * nv + hi).tolist() == want.tolist()
    assert elab.tolist() == lab[keep][first].tolist()
    assert start.tolist() == np.searchsorted(lo, np.arange(nv + 1)).tolist()


def reference_lists(nv: int, lo: np.ndarray, hi: np.ndarray, lab: np.ndarray) -> list:
    lists: list[list[tuple[int, int]]] = [[] for _ in range(nv)]
    for a, b, c in zip(lo.tolist(), hi.tolist(), lab.tolist(), strict=True):
        lists[a].append((b, c))
        lists[b].append((a, c))
    return [sorted(x) for x in lists]


@pytest.mark.parametrize("parts", [1, 4])
def test_cpu_pool_holds_sorted_lists(monkeypatch: pytest.MonkeyPatch, parts: int) -> None:
    monkeypatch.setattr(bulk, "_threads", lambda n: parts)
    rng = np.random.default_rng(parts)
    g = random_graph(rng, sparse=False, n=300, m=3000)
    ext, _, lo, hi, lab = reference_intern(g)
    e = CpuEngine()
    e.load_graph(g)
    want = reference_lists(len(ext), lo, hi, lab)
    got = [
        list(zip(e._nbr[e._off[x] : e._off[x] + e._deg[x]].tolist(),
                 e._elab[e._off[x] : e._off[x] + e._deg[x]].tolist(), strict=True))
        for x in range(e.num_vertices)
    ]  # fmt: skip
    assert got == want
    assert (e._cap[: len(ext)] >= e._deg[: len(ext)]).all()
    assert (np.diff(e._off[: len(ext)]) == e._cap[: len(ext) - 1]).all()
    assert e.num_edges == len(lo)


def reference_image(nv: int, lo: np.ndarray, hi: np.ndarray, lab: np.ndarray, nclass: int):  # type: ignore[no-untyped-def]
    """The slab image built the direct way: one lexsort of both directions, runs of 2^cls
    slabs back to back."""
    src = np.concatenate([lo, hi]).astype(np.int64)
    dst = np.concatenate([hi, lo]).astype(np.int32)
    elab = np.concatenate([lab, lab]).astype(np.int32)
    order = np.lexsort((dst, src))
    src, dst, elab = src[order], dst[order], elab[order]
    deg = np.bincount(src, minlength=nv)
    has = deg > 0
    cls = np.ceil(np.log2(np.maximum((deg + 31) // 32, 1))).astype(np.int64)
    run = np.where(has, 1 << cls, 0)
    slab0 = np.concatenate([[0], np.cumsum(run)[:-1]])
    entries = np.zeros((int(run.sum()) * 32, 4), np.int32)
    rank = np.arange(len(src)) - np.concatenate([[0], np.cumsum(deg)[:-1]])[src]
    at = slab0[src] * 32 + rank
    entries[at] = np.stack([dst, elab, np.zeros_like(dst), np.full_like(dst, INF_TS)], 1)
    return entries, slab0[has], deg[has], cls[has], np.nonzero(has)[0]


@pytest.mark.parametrize("sorted_input", [False, True])
def test_gpu_image_equals_the_direct_construction(sorted_input: bool) -> None:
    rng = np.random.default_rng(7)
    nv = 400
    a, b = rng.integers(0, nv, 6000), rng.integers(0, nv, 6000)
    a[:2000] = rng.integers(0, 3, 2000)  # hubs: runs of several slabs
    pairs = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)], 1)[a != b], axis=0)
    pairs = pairs[rng.permutation(len(pairs))]
    lo, hi = pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32)
    lab = rng.integers(0, 4, len(lo)).astype(np.int32)
    entries, slab0, deg, cls, xs = reference_image(nv, lo, hi, lab, nclass=8)
    if sorted_input:
        start, lo, hi, lab = sort_edges(lo, hi, lab, nv)
        img = build_image(nv, lo, hi, lab, nclass=8, start=start)
    else:
        img = build_image(nv, lo, hi, lab, nclass=8)
    assert img.used_slabs * 32 == len(entries) and (img.entries == entries).all()
    assert img.versions[:, V_SLAB].tolist() == slab0.tolist()
    assert img.versions[:, V_LEN].tolist() == deg.tolist()
    assert img.versions[:, V_CLS].tolist() == cls.tolist()
    assert img.versions[:, V_X].tolist() == xs.tolist()
    assert (img.versions[:, V_DT_MAX] == INF_TS).all() and (img.versions[:, V_PREV] == -1).all()
    assert img.head[xs].tolist() == list(range(len(xs))) and int(cls.max()) >= 2
    # on the device the image is written in chunks into a larger zeroed pool
    for parts in (1, 3, 50):  # on the device: a piece of the lists at a time, in chunks
        pool = np.zeros((len(entries) + 96, 4), np.int32)
        pieces = list(img.lists(parts))
        for versions, nbr, elab in pieces:
            fill_entries(np, pool, versions, nbr, elab, chunk=1000)
        assert (pool[: len(entries)] == entries).all() and not pool[len(entries) :].any()
        assert len(pieces) >= min(parts, 10) and sum(len(p[1]) for p in pieces) == 2 * len(lo)
    got = live_edges(np, img.head, img.versions, pool)
    assert sorted(zip(*(x.tolist() for x in got), strict=True)) == sorted(
        zip(lo.tolist(), hi.tolist(), lab.tolist(), strict=True)
    )
