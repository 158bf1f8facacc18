"""Bulk load, the part both engines share: a :class:`~dcsm.model.Graph` in external ids
becomes internal-id edges, each undirected edge once and sorted, then sorted adjacency
lists laid out wherever the engine wants them.

**Numbering rule** (both engines; ``export_graph`` gives the vertices back in this order):
the declared vertices first, in their order, then the endpoints that no vertex declares, in
ascending id. A vertex declared twice is an error; self loops are dropped (an undeclared
endpoint of one still becomes a vertex); a pair listed twice keeps its first label.

**Steps** (E edges, V vertices, T threads; every E-sized pass is a parallel numba loop):

1. *Ids.* Declared id -> position: a direct array when the ids span at most 2V + 1024
   values (ids 0..V-1 and the like: one array read per lookup), else the hash table of
   :mod:`dcsm.engine.idtable`, built in parallel.
2. *Endpoints.* Each endpoint looked up (E-parallel). Undeclared ones (usually none) are
   deduplicated through a hash table and only the distinct ones sorted (np.unique over all
   2E endpoints took most of the old load).
3. *Edges* (:func:`sort_edges`). lo = min, hi = max of each edge's internal ids; a stable
   counting sort by lo, then each lo's run sorted by hi (a linear check first: runs usually
   arrive sorted) and repeats dropped. One int32 key per edge and no lexsort.
4. *Adjacency* (:func:`fill_lists`). With edges sorted by (lo, hi), vertex x's sorted list
   is its lower neighbours (the lo of every edge whose hi is x, ascending in edge order)
   followed by its upper ones (its own run of hi, already ascending), so no list needs a
   sort: the upper halves are copies of runs, and the lower halves a stable scatter by hi.

The counting passes are *owner scans* (as in :mod:`dcsm.gpu.rings`): thread t owns one range
of vertices, reads every edge and handles only those it owns. Owned cursors are never
shared, writes land in disjoint slots, edge order is kept (so the sort is stable), and no
per-thread histogram of V counters is needed; each thread reads the edge arrays once,
which costs memory bandwidth, not memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from numba import njit, prange

from ..errors import EngineError
from ..model import Graph
from .idtable import DuplicateKeyError, IdTable, distinct, get, table_shift

MAX_VERTICES = 2**31 - 1  # internal ids are int32


@dataclass(frozen=True)
class InternedGraph:
    """A graph in internal ids (see the module docstring for the numbering rule).

    Attributes:
        ext: int64 (V,); external id of internal vertex x.
        vlab: int32 (V,); its label.
        start: int64 (V + 1,); the edges with lo == x are [start[x], start[x + 1]).
        lo, hi: int32 (m,); each undirected edge once, lo < hi, sorted by (lo, hi).
        elab: int32 (m,); edge labels.
        ids: the id table ext[x] -> x.
    """

    ext: np.ndarray
    vlab: np.ndarray
    start: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    elab: np.ndarray
    ids: IdTable

    @property
    def num_vertices(self) -> int:
        return int(self.ext.shape[0])

    @property
    def num_edges(self) -> int:
        return int(self.lo.shape[0])


def intern_graph(graph: Graph) -> InternedGraph:
    """The graph in internal ids. Raises EngineError for a vertex declared twice or more
    than 2^31 - 1 vertices."""
    declared = np.ascontiguousarray(graph.vertex_ids, np.int64)
    src = np.ascontiguousarray(graph.src, np.int64)
    dst = np.ascontiguousarray(graph.dst, np.int64)
    nd = len(declared)
    a = np.empty(len(src), np.int32)
    b = np.empty(len(src), np.int32)
    lo_id = int(declared.min()) if nd else 0
    span = int(declared.max()) - lo_id + 1 if nd else 0
    if nd and span <= 2 * nd + 1024:
        direct = np.full(span, -1, np.int32)
        direct[declared - lo_id] = np.arange(nd, dtype=np.int32)
        clash = direct[declared - lo_id] != np.arange(nd)
        if clash.any():
            raise EngineError(f"graph declares a vertex id twice: {int(declared[clash][0])}")
        missing = _map_direct(src, dst, lo_id, direct, a, b)
        table = None
    else:
        try:
            table = IdTable.from_keys(declared)
        except DuplicateKeyError as exc:
            raise EngineError(f"graph declares a vertex id twice: {exc.key}") from None
        missing = _map_hashed(src, dst, table.slots, a, b)
    extra = np.zeros(0, np.int64)
    if missing:
        extra = np.sort(distinct(np.concatenate([src[a < 0], dst[b < 0]])))
        if nd + len(extra) > MAX_VERTICES:
            raise EngineError(f"the graph has {nd + len(extra)} vertices; at most {MAX_VERTICES}")
        more = IdTable.from_keys(extra, np.arange(nd, nd + len(extra), dtype=np.int32))
        _fill_missing(src, dst, more.slots, a, b)
    ext = np.concatenate([declared, extra])
    vlab = np.concatenate(
        [np.asarray(graph.vertex_labels, np.int32), np.zeros(len(extra), np.int32)]
    )
    start, hi, elab = _runs(a, b, np.asarray(graph.edge_labels, np.int32), len(ext))
    del a, b  # before lo and the table: the peak memory of a load is here
    lo = _lo_of(start, hi)
    if table is None:
        table = IdTable.from_keys(ext)
    elif len(extra):
        table.ensure(len(ext))
        table.insert(extra, np.arange(nd, len(ext), dtype=np.int32))
    return InternedGraph(ext, vlab, start, lo, hi, elab, table)


def sort_edges(
    a: np.ndarray, b: np.ndarray, lab: np.ndarray, nv: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edges a[i]-b[i] (int32 internal ids (n,), any order, self loops and repeats
    allowed) as (start, lo, hi, lab): each pair once (its first label), lo < hi, sorted by
    (lo, hi); start int64 (nv + 1,) delimits each lo's run."""
    start, hi, elab = _runs(a, b, lab, nv)
    return start, _lo_of(start, hi), hi, elab


def _runs(
    a: np.ndarray, b: np.ndarray, lab: np.ndarray, nv: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start, hi, lab) of :func:`sort_edges`."""
    a = np.ascontiguousarray(a, np.int32)
    b = np.ascontiguousarray(b, np.int32)
    lab = np.ascontiguousarray(lab, np.int32)
    nthreads = _threads(len(a))
    start = np.cumsum(_count_lo(a, b, nv, nthreads))
    m = int(start[-1])
    hi = np.empty(m, np.int32)
    elab = np.empty(m, np.int32)
    bounds = _bounds(start, nthreads)
    _scatter_by_lo(a, b, lab, start, bounds, hi, elab)
    keep = np.empty(nv, np.int64)
    _sort_runs(start, bounds, hi, elab, keep)
    if int(keep.sum()) < m:  # repeated pairs: close the gaps they left
        kept = np.zeros(nv + 1, np.int64)
        np.cumsum(keep, out=kept[1:])
        hi2 = np.empty(int(kept[-1]), np.int32)
        elab2 = np.empty(int(kept[-1]), np.int32)
        _compact(start, kept, bounds, hi, elab, hi2, elab2)
        start, hi, elab = kept, hi2, elab2
    return start, hi, elab


def _lo_of(start: np.ndarray, hi: np.ndarray) -> np.ndarray:
    lo = np.empty(len(hi), np.int32)
    _expand(start, _bounds(start, _threads(len(hi))), lo)
    return lo


def lower_counts(start: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """int32 (nv,): how many edges of the sorted edge list have hi == x (x's neighbours
    below x)."""
    nv = len(start) - 1
    return _count_hi(hi, nv, _threads(len(hi)))


def fill_lists(
    start: np.ndarray, lo: np.ndarray, hi: np.ndarray, lab: np.ndarray, low: np.ndarray,
    off: np.ndarray, nbr: np.ndarray, elab: np.ndarray, first: int = 0, stop: int | None = None,
) -> None:  # fmt: skip
    """Write the sorted neighbour lists (and edge labels) of vertices first..stop-1
    (default: all) into ``nbr``/``elab`` (int32), x's at ``off[x] - off[first]`` (off int64
    (nv,); room for x's degree from there), from the sorted edges of :func:`sort_edges`
    and ``low`` from :func:`lower_counts`. A range lets a caller build the lists a piece
    at a time (each piece still reads every edge once)."""
    nv = len(low)
    stop = nv if stop is None else stop
    if stop <= first:
        return
    nthreads = _threads(len(hi))
    low_start = np.zeros(nv + 1, np.int64)
    np.cumsum(low, out=low_start[1:])
    up = _bounds(start[first : stop + 1] - start[first], nthreads) + first
    down = _bounds(low_start[first : stop + 1] - low_start[first], nthreads) + first
    _fill(start, lo, hi, lab, low, off, int(off[first]), up, down, nbr, elab)


def _threads(n: int) -> int:
    """Threads for a pass over n edges: one below 64K (not worth waking the others)."""
    return 1 if n < 1 << 16 else numba.get_num_threads()


def _bounds(start: np.ndarray, parts: int) -> np.ndarray:
    """int64 (parts + 1,): vertex ranges holding about equal shares of the runs that the
    prefix sums ``start`` (nv + 1,) delimit."""
    nv = len(start) - 1
    targets = np.arange(parts + 1, dtype=np.int64) * int(start[-1]) // parts
    bounds = np.minimum(np.searchsorted(start, targets, side="left"), nv).astype(np.int64)
    bounds[0], bounds[-1] = 0, nv
    return bounds


# -- kernels --------------------------------------------------------------------------------


@njit(parallel=True, cache=True)
def _map_direct(src, dst, base, direct, a, b):  # type: ignore[no-untyped-def]
    """a/b = positions of src/dst among the declared ids (direct[id - base]), -1 if
    undeclared; returns how many are undeclared."""
    span = direct.shape[0]
    missing = 0
    for i in prange(src.shape[0]):
        # ids far above base wrap to negative differences: undeclared, as they should be
        x = src[i] - base
        y = dst[i] - base
        p = direct[x] if 0 <= x < span else -1
        q = direct[y] if 0 <= y < span else -1
        a[i] = p
        b[i] = q
        missing += (p < 0) + (q < 0)
    return missing


@njit(parallel=True, cache=True)
def _map_hashed(src, dst, slots, a, b):  # type: ignore[no-untyped-def]
    """As _map_direct, through the id table."""
    shift = table_shift(slots)
    missing = 0
    for i in prange(src.shape[0]):
        p = get(slots, shift, src[i])
        q = get(slots, shift, dst[i])
        a[i] = p
        b[i] = q
        missing += (p < 0) + (q < 0)
    return missing


@njit(parallel=True, cache=True)
def _fill_missing(src, dst, slots, a, b):  # type: ignore[no-untyped-def]
    shift = table_shift(slots)
    for i in prange(src.shape[0]):
        if a[i] < 0:
            a[i] = get(slots, shift, src[i])
        if b[i] < 0:
            b[i] = get(slots, shift, dst[i])


@njit(parallel=True, cache=True)
def _count_lo(a, b, nv, nthreads):  # type: ignore[no-untyped-def]
    """cnt (nv + 1,) with cnt[x + 1] = the non-loop edges whose smaller end is x."""
    cnt = np.zeros(nv + 1, np.int64)
    for t in prange(nthreads):
        x0 = nv * t // nthreads
        x1 = nv * (t + 1) // nthreads
        for e in range(a.shape[0]):
            p = a[e]
            q = b[e]
            x = p if p < q else q
            if p != q and x0 <= x < x1:
                cnt[x + 1] += 1
    return cnt


@njit(parallel=True, cache=True)
def _scatter_by_lo(a, b, lab, start, bounds, hi, elab):  # type: ignore[no-untyped-def]
    """Stable counting-sort scatter: each non-loop edge's larger end and label to its
    smaller end's run, in edge order."""
    pos = start[:-1].copy()
    for t in prange(bounds.shape[0] - 1):
        x0 = bounds[t]
        x1 = bounds[t + 1]
        for e in range(a.shape[0]):
            p = a[e]
            q = b[e]
            if p == q:
                continue
            x = p if p < q else q
            if x0 <= x < x1:
                k = pos[x]
                hi[k] = q if p < q else p
                elab[k] = lab[e]
                pos[x] = k + 1


@njit(parallel=True, cache=True)
def _sort_runs(start, bounds, hi, elab, keep):  # type: ignore[no-untyped-def]
    """Sort each run of hi ascending, stably (a repeat keeps its first label at the front),
    and squeeze repeats out to the run's front; keep[x] = the run's length after that."""
    for t in prange(bounds.shape[0] - 1):
        for x in range(bounds[t], bounds[t + 1]):
            s = start[x]
            e = start[x + 1]
            ok = True
            for k in range(s + 1, e):
                if hi[k - 1] >= hi[k]:
                    ok = False
                    break
            if ok:
                keep[x] = e - s
                continue
            if e - s <= 32:  # insertion sort: stable, and best on short runs
                for k in range(s + 1, e):
                    h = hi[k]
                    g = elab[k]
                    j = k
                    while j > s and hi[j - 1] > h:
                        hi[j] = hi[j - 1]
                        elab[j] = elab[j - 1]
                        j -= 1
                    hi[j] = h
                    elab[j] = g
            else:
                order = np.argsort(hi[s:e], kind="mergesort")
                hi[s:e] = hi[s:e][order]
                elab[s:e] = elab[s:e][order]
            w = s + 1
            for k in range(s + 1, e):
                if hi[k] != hi[w - 1]:
                    hi[w] = hi[k]
                    elab[w] = elab[k]
                    w += 1
            keep[x] = w - s


@njit(parallel=True, cache=True)
def _compact(start, kept, bounds, hi, elab, hi2, elab2):  # type: ignore[no-untyped-def]
    for t in prange(bounds.shape[0] - 1):
        for x in range(bounds[t], bounds[t + 1]):
            s = start[x]
            w = kept[x]
            for k in range(kept[x + 1] - w):
                hi2[w + k] = hi[s + k]
                elab2[w + k] = elab[s + k]


@njit(parallel=True, cache=True)
def _expand(start, bounds, lo):  # type: ignore[no-untyped-def]
    for t in prange(bounds.shape[0] - 1):
        for x in range(bounds[t], bounds[t + 1]):
            for k in range(start[x], start[x + 1]):
                lo[k] = x


@njit(parallel=True, cache=True)
def _count_hi(hi, nv, nthreads):  # type: ignore[no-untyped-def]
    low = np.zeros(nv, np.int32)
    for t in prange(nthreads):
        x0 = nv * t // nthreads
        x1 = nv * (t + 1) // nthreads
        for e in range(hi.shape[0]):
            h = hi[e]
            if x0 <= h < x1:
                low[h] += 1
    return low


@njit(parallel=True, cache=True)
def _fill(start, lo, hi, lab, low, off, base, up_bounds, low_bounds, nbr, elab):  # type: ignore[no-untyped-def]
    """Lists of the vertices in the bounds, x's at off[x] - base. Upper halves: x's run of
    hi, after its low[x] lower neighbours. Lower halves: each edge's lo appended to its
    hi's list, in edge order (so ascending)."""
    for t in prange(up_bounds.shape[0] - 1):
        for x in range(up_bounds[t], up_bounds[t + 1]):
            s = start[x]
            o = off[x] - base + low[x]
            for k in range(start[x + 1] - s):
                nbr[o + k] = hi[s + k]
                elab[o + k] = lab[s + k]
    # Where each vertex's next lower neighbour goes: one array, so one cache miss per edge
    # for the cursor (with off and a separate count it was two).
    cursor = off - base
    for t in prange(low_bounds.shape[0] - 1):
        h0 = low_bounds[t]
        h1 = low_bounds[t + 1]
        for e in range(hi.shape[0]):
            h = hi[e]
            if h0 <= h < h1:
                k = cursor[h]
                nbr[k] = lo[e]
                elab[k] = lab[e]
                cursor[h] = k + 1
