"""Host side of the multi-version graph (no GPU): bulk image and export agree.

``live_edges`` reads what the kernel leaves in device memory; here the arrays come from
``build_image`` and are then edited the way the graph updater edits them (a newer version
whose run has a deleted entry, a vertex whose newest version is empty)."""

from __future__ import annotations

import numpy as np

from dcsm.gpu.layout import INF_TS, VERSION_FIELDS
from dcsm.gpu.mvg import V_SLAB, VERSION_INTS, build_image, live_edges


def edges(a: np.ndarray, b: np.ndarray, lab: np.ndarray) -> set[tuple[int, int, int]]:
    return set(zip(a.tolist(), b.tolist(), lab.tolist(), strict=True))


def version(**fields: int) -> np.ndarray:
    """A row of the version table with the named fields set, the others 0."""
    row = np.zeros(VERSION_INTS, np.int32)
    for name, value in fields.items():
        row[VERSION_FIELDS.index(name)] = value
    return row


def random_graph(nv: int, ne: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, nv, ne)
    b = rng.integers(0, nv, ne)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(np.stack([lo, hi], 1)[lo < hi], axis=0)
    lab = rng.integers(0, 3, len(pairs))
    return pairs[:, 0].astype(np.int32), pairs[:, 1].astype(np.int32), lab.astype(np.int32)


def test_bulk_image_exports_its_edges() -> None:
    lo, hi, lab = random_graph(300, 3000, seed=1)  # degrees above 32: runs of several slabs
    img = build_image(300, lo, hi, lab, nclass=8)
    got = live_edges(np, img.head, img.versions, img.entries)
    assert edges(*got) == edges(lo, hi, lab)
    # in chunks smaller than a run, and than the whole: the same edges
    for chunk in (7, 1000):
        assert edges(*live_edges(np, img.head, img.versions, img.entries, chunk)) == edges(*got)


def test_newest_version_and_deleted_entries() -> None:
    lo = np.array([0, 0, 1, 2], np.int32)
    hi = np.array([1, 2, 2, 3], np.int32)
    lab = np.array([5, 6, 7, 8], np.int32)
    img = build_image(5, lo, hi, lab, nclass=4)
    entries = np.concatenate([img.entries, np.zeros((64, 4), np.int32)])
    versions = np.concatenate([img.versions, np.zeros((2, VERSION_INTS), np.int32)])
    head = img.head.copy()
    # vertex 0: a newer version in a fresh slab; edge 0-1 deleted there, 0-4 inserted
    new0 = img.used_slabs
    entries[new0 * 32 : new0 * 32 + 3] = [[1, 5, 0, 9], [2, 6, 0, INF_TS], [4, 9, 9, INF_TS]]
    versions[len(img.versions)] = version(slab=new0, len=3, blen=3, toff=3, dt_max=INF_TS,
                                          prev=head[0], ndead=1, x=0)  # fmt: skip
    head[0] = len(img.versions)
    # vertex 3: newest version empty (its only edge, 2-3, is seen from vertex 2)
    versions[len(img.versions) + 1] = version(slab=new0 + 1, dt_max=INF_TS, prev=head[3], x=3)
    head[3] = len(img.versions) + 1
    got = edges(*live_edges(np, head, versions, entries))
    assert got == {(0, 2, 6), (0, 4, 9), (1, 2, 7), (2, 3, 8)}


def test_a_list_with_a_tail() -> None:
    """A version whose list is a base run and, further on in the same slab run, a tail run
    (the kernel's append): both are exported, the stale tail between them is not."""
    lo = np.array([0, 0, 1], np.int32)
    hi = np.array([1, 2, 2], np.int32)
    lab = np.array([5, 6, 7], np.int32)
    img = build_image(6, lo, hi, lab, nclass=4)
    entries, versions, head = img.entries.copy(), img.versions.copy(), img.head.copy()
    run = versions[head[0], V_SLAB] * 32  # vertex 0's run: base [1, 2]
    entries[run + 2] = [3, 9, 4, INF_TS]  # an older tail (3), no version's any more
    entries[run + 3 : run + 5] = [[3, 9, 4, INF_TS], [4, 8, 5, INF_TS]]  # the newest tail
    entries[run, 3] = 6  # 0-1 deleted in place in the base
    versions = np.concatenate([versions, np.zeros((1, VERSION_INTS), np.int32)])
    versions[-1] = version(slab=versions[head[0], V_SLAB], len=4, blen=2, toff=3, ct_min=4,
                           dt_max=INF_TS, prev=head[0], ndead=1, x=0)  # fmt: skip
    head[0] = len(versions) - 1
    got = edges(*live_edges(np, head, versions, entries))
    assert got == {(0, 2, 6), (0, 3, 9), (0, 4, 8), (1, 2, 7)}


def test_empty_graph() -> None:
    img = build_image(4, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32), 4)
    a, b, lab = live_edges(np, img.head, img.versions, img.entries)
    assert len(a) == len(b) == len(lab) == 0
