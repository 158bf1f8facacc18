"""Host side of the multi-version graph: bulk load and export.

The initial graph becomes one version per vertex (lifetime [0, INF]) whose entries
(neighbour, label, ct=0, dt=INF) are sorted by neighbour and occupy a run of 2^cls slabs of
32 entries (the smallest power of two that holds them), runs laid out back to back from slab
0. The kernel's allocator continues after them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dcsm.engine.bulk import fill_lists, lower_counts, sort_edges

from .layout import INF_TS, VERSION_FIELDS

PIECE_ENTRIES = 1 << 24  # list entries built and sent to the device at a time (128 MiB)

# Columns of the version table (gpu/layout.cuh's Version, in gpu/layout.py's VERSION_FIELDS
# order): a list is a base run, entries [slab * 32, + blen), and a tail run, entries
# [slab * 32 + toff, + len - blen); [ct_min, dt_max] is its lifetime, prev the older
# version, x its vertex; cls the run's size class; kept: the run belongs to the next version.
VERSION_INTS = len(VERSION_FIELDS)
V_SLAB, V_LEN, V_BLEN, V_TOFF, V_CT_MIN, V_DT_MAX, V_PREV, V_X, V_CLS, V_KEPT = (
    VERSION_FIELDS.index(f)
    for f in ("slab", "len", "blen", "toff", "ct_min", "dt_max", "prev", "x", "cls", "kept")
)


@dataclass(frozen=True)
class BulkImage:
    """A freshly loaded graph, ready for device memory: the version table and the layout
    of the runs. The runs' contents are not kept: the slab image pads every run to a power
    of two of 32-entry slabs (16 B per entry), several times the edges' size, so it is only
    ever materialised on the device (:func:`fill_entries`), from compact lists that
    :meth:`lists` builds a piece at a time (bounding the host memory of a load);
    ``entries`` builds the image on the host for tests."""

    versions: np.ndarray  # int32 (nver, VERSION_INTS), one run each (no tails)
    head: np.ndarray  # int32 (nv,)
    used_slabs: int
    slabs_by_class: np.ndarray  # int64 (nclass,) runs of each class (for pool stats)
    # the sorted edges (start, lo, hi, elab as from sort_edges), lower_counts, and the
    # int64 (nv + 1,) prefix sums of the degrees
    edges: tuple[np.ndarray, ...]

    @property
    def num_entries(self) -> int:
        """Entries in all runs (twice the edges)."""
        return int(self.edges[5][-1])

    def lists(
        self, parts: int | None = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The runs' contents in about ``parts`` pieces of similar size (default: pieces of
        at most PIECE_ENTRIES entries), each (versions rows, nbr, elab): int32 neighbour
        lists of those versions' vertices back to back, each sorted, and their edge labels
        (what :func:`fill_entries` takes)."""
        start, lo, hi, elab, low, off = self.edges
        nv = len(low)
        if parts is None:
            parts = max(1, -(-self.num_entries // PIECE_ENTRIES))
        first_version = np.zeros(nv + 1, np.int64)
        np.cumsum(np.diff(off) > 0, out=first_version[1:])
        targets = np.arange(parts + 1, dtype=np.int64) * int(off[-1]) // parts
        cuts = np.unique(np.concatenate([[0, nv], np.searchsorted(off, targets).clip(0, nv)]))
        for x0, x1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
            n = int(off[x1] - off[x0])
            nbr = np.empty(n, np.int32)
            lab = np.empty(n, np.int32)
            fill_lists(start, lo, hi, elab, low, off[:-1], nbr, lab, x0, x1)
            yield self.versions[first_version[x0] : first_version[x1]], nbr, lab

    @property
    def entries(self) -> np.ndarray:
        """int32 (used_slabs * 32, 4): nbr, elab, ct, dt of every slot of the image."""
        out = np.zeros((self.used_slabs * 32, 4), np.int32)
        for versions, nbr, elab in self.lists(parts=1):
            fill_entries(np, out, versions, nbr, elab)
        return out


def ceil_log2(x: np.ndarray) -> np.ndarray:
    """Elementwise smallest c with 2**c >= x (x >= 1)."""
    return np.ceil(np.log2(np.maximum(x, 1))).astype(np.int32)


def build_image(
    nv: int, lo: np.ndarray, hi: np.ndarray, lab: np.ndarray, nclass: int,
    start: np.ndarray | None = None,
) -> BulkImage:  # fmt: skip
    """Image of an undirected graph given as internal-id edges: int32 (m,) ``lo`` < ``hi``
    and ``lab``, no pair twice. With ``start`` (int64 (nv + 1,), as from
    :func:`dcsm.engine.bulk.intern_graph`) the edges are sorted by (lo, hi) and lo's run is
    [start[lo], start[lo + 1]); without it they may come in any order (sorted here)."""
    if start is None:
        start, lo, hi, lab = sort_edges(lo, hi, lab, nv)
    low = lower_counts(start, hi)
    deg = np.diff(start) + low
    off = np.zeros(nv + 1, np.int64)
    np.cumsum(deg, out=off[1:])
    has = deg > 0
    cls = ceil_log2((deg + 31) // 32)
    if has.any() and cls[has].max() >= nclass:
        raise ValueError(f"a vertex of degree {int(deg.max())} needs a slab class >= {nclass}")
    run = np.where(has, np.int64(1) << cls.astype(np.int64), 0)
    slab0 = np.zeros(nv, np.int64)
    np.cumsum(run[:-1], out=slab0[1:])
    used = int(run.sum())
    vid = np.cumsum(has) - 1
    head = np.where(has, vid, -1).astype(np.int32)
    nver = int(has.sum())
    versions = np.zeros((nver, VERSION_INTS), np.int32)
    versions[:, V_SLAB] = slab0[has]
    versions[:, V_LEN] = versions[:, V_BLEN] = versions[:, V_TOFF] = deg[has]
    versions[:, V_CLS] = cls[has]
    versions[:, V_CT_MIN] = 0
    versions[:, V_DT_MAX] = INF_TS
    versions[:, V_PREV] = -1
    versions[:, V_X] = np.nonzero(has)[0]
    by_class = np.bincount(cls[has], minlength=nclass).astype(np.int64)
    return BulkImage(versions, head, used, by_class, (start, lo, hi, lab, low, off))


def fill_entries(
    xp: Any, entries: Any, versions: Any, nbr: Any, elab: Any, chunk: int = 1 << 24
) -> None:
    """Write an image's entries into ``entries`` (int32 (>= used_slabs * 32, 4), zero where
    nothing is written), with ``xp`` numpy or cupy (then every array is a device array and
    this runs on the current stream). Version k's run starts at slab ``versions[k, V_SLAB]``
    and takes the next ``versions[k, V_LEN]`` of ``nbr``/``elab``; each gets ct = 0, dt =
    INF. Works ``chunk`` entries at a time (bounds the index arrays' memory)."""
    length = versions[:, V_LEN].astype(xp.int64)
    end = xp.cumsum(length)
    base = versions[:, V_SLAB].astype(xp.int64) * 32 - (end - length)  # slot of entry j: base + j
    total = int(nbr.shape[0])
    for c0 in range(0, total, chunk):
        j = xp.arange(c0, min(total, c0 + chunk), dtype=xp.int64)
        at = base[xp.searchsorted(end, j, side="right")] + j
        entries[at, 0] = nbr[c0 : c0 + len(j)]
        entries[at, 1] = elab[c0 : c0 + len(j)]
        entries[at, 3] = INF_TS


def live_edges(
    xp: Any, head: Any, versions: Any, entries: Any, chunk: int = 1 << 24
) -> tuple[Any, Any, Any]:
    """Current edges (internal ids, a < b, label): the live entries (dt == INF) of every
    vertex's newest version (its base run and its tail run), with ``xp`` numpy (arrays copied
    from the device) or cupy (the device arrays themselves, on the current stream: no copy of
    the pool to the host). Vectorised as :func:`fill_entries`, ``chunk`` entries at a time (a
    Python loop over vertices cost 2.6 s at 124K vertices)."""
    has = xp.nonzero(head >= 0)[0]
    newest = versions[head[has]]
    first = newest[:, V_SLAB].astype(xp.int64) * 32
    blen = newest[:, V_BLEN].astype(xp.int64)
    xs = xp.concatenate([has, has])  # every vertex's base run, then every tail run
    start = xp.concatenate([first, first + newest[:, V_TOFF]])
    length = xp.concatenate([blen, newest[:, V_LEN] - blen])
    end = xp.cumsum(length)
    base = start - (end - length)  # slot of entry j: base + j
    total = int(end[-1]) if len(end) else 0
    parts = []
    for c0 in range(0, total, chunk):
        j = xp.arange(c0, min(total, c0 + chunk), dtype=xp.int64)
        run = xp.searchsorted(end, j, side="right")
        e = entries[base[run] + j]
        owner = xs[run].astype(xp.int32)
        keep = (e[:, 3] == INF_TS) & (e[:, 0] > owner)
        parts.append((owner[keep], e[keep, 0].astype(xp.int32), e[keep, 1].astype(xp.int32)))
    if not parts:
        return tuple(xp.zeros(0, xp.int32) for _ in range(3))  # type: ignore[return-value]
    a, b, lab = (xp.concatenate(p) for p in zip(*parts, strict=True))
    return a, b, lab
