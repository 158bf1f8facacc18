"""Host-side admission of edge updates: external ids to dense internal ids, and the
per-update rejections both engines share (self loops, vertex label conflicts).

A vertex's label is fixed when it is first seen (in the initial graph or an accepted update
that creates it); an unlabelled first sighting gets label 0. Deletions never create vertices:
a deletion touching an unknown vertex is a no-op.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..model import OUTCOME_APPLIED, OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP, OUTCOME_SELF_LOOP
from .idtable import get, prefetch, put, table_shift

# Lookups ahead whose slots the first pass prefetches (idtable.prefetch).
_AHEAD = 64

# Outcome used for updates that passed admission; the engine decides applied vs no-op.
ADMITTED = OUTCOME_APPLIED


@njit(cache=True, nogil=True)
def admit(op, u, v, u_label, v_label, slots, ext, vlab, meta, outcome, a_out, b_out):  # type: ignore[no-untyped-def]
    """Admit updates in order. For each update i: outcome[i] is OUTCOME_SELF_LOOP,
    OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP (deletion of an unknown vertex) or ADMITTED with
    a_out/b_out the internal ids (-1 for the other outcomes), interning new vertices of
    insertions into the id table ``slots`` (:mod:`dcsm.engine.idtable`), ext and vlab;
    meta[0] counts vertices; returns how many were admitted. The caller guarantees ext/vlab
    have room for 2 * len(op) more vertices and the table for meta[0] + 2 * len(op) keys
    (``IdTable.ensure``).

    Two passes: every endpoint is looked up first (into a_out/b_out), then one pass
    decides each update in order, looking an endpoint up again only if it was missing and
    this call has created a vertex since (it may be that one). The lookups are the cost
    (cache misses in a table of millions of ids); with no decision between them the CPU
    overlaps several (25 vs 19 M updates/s for one fused pass, 4.8M vertices), and more
    with the slots of the lookups _AHEAD on prefetched. A parallel first pass lost 3x on a
    busy 2-core host: one thread pool wake-up per 4096 updates.
    """
    look_up(u, v, slots, a_out, b_out)
    return admit_looked_up(op, u, v, u_label, v_label, slots, ext, vlab, meta, outcome, a_out,
                           b_out)  # fmt: skip


@njit(cache=True, nogil=True)
def look_up(u, v, slots, a_out, b_out):  # type: ignore[no-untyped-def]
    """Admission's first pass: the internal id of every endpoint, -1 where it has none."""
    shift = table_shift(slots)
    n = u.shape[0]
    for i in range(min(_AHEAD, n)):
        prefetch(slots, shift, u[i])
        prefetch(slots, shift, v[i])
    for i in range(n):
        if i + _AHEAD < n:
            prefetch(slots, shift, u[i + _AHEAD])
            prefetch(slots, shift, v[i + _AHEAD])
        a_out[i] = get(slots, shift, u[i])
        b_out[i] = get(slots, shift, v[i])


@njit(cache=True, nogil=True, parallel=True)
def look_up_parallel(u, v, slots, a_out, b_out):  # type: ignore[no-untyped-def]
    """:func:`look_up` spread over numba's threads (GpuEngine's ``host_threads``): 4,096
    lookups took 12.4 us on one thread of the H200 host, 10.2 us on 8, an empty parallel
    launch 5-8 us (bench/results/gpu/session31/README.md)."""
    shift = table_shift(slots)
    for i in prange(u.shape[0]):
        a_out[i] = get(slots, shift, u[i])
        b_out[i] = get(slots, shift, v[i])


@njit(cache=True, nogil=True)
def admit_looked_up(op, u, v, u_label, v_label, slots, ext, vlab, meta, outcome, a_out, b_out):  # type: ignore[no-untyped-def]
    """Admission's second pass (:func:`admit`), a_out/b_out holding :func:`look_up`'s ids."""
    shift = table_shift(slots)
    n0 = meta[0]
    admitted = 0
    for i in range(op.shape[0]):
        x = u[i]
        y = v[i]
        ix = a_out[i]
        iy = b_out[i]
        a_out[i] = -1
        b_out[i] = -1
        if x == y:
            outcome[i] = OUTCOME_SELF_LOOP
            continue
        if meta[0] > n0:
            if ix < 0:
                ix = get(slots, shift, x)
            if iy < 0:
                iy = get(slots, shift, y)
        lx = u_label[i]
        ly = v_label[i]
        if (lx >= 0 and ix >= 0 and vlab[ix] != lx) or (ly >= 0 and iy >= 0 and vlab[iy] != ly):
            outcome[i] = OUTCOME_LABEL_CONFLICT
            continue
        if ix < 0 or iy < 0:
            if op[i] < 0:
                outcome[i] = OUTCOME_NOOP
                continue
            # x before y: new vertices are numbered in order of first sighting.
            if ix < 0:
                ix = _new_vertex(slots, shift, x, lx, ext, vlab, meta)
            if iy < 0:
                iy = _new_vertex(slots, shift, y, ly, ext, vlab, meta)
        a_out[i] = ix
        b_out[i] = iy
        outcome[i] = ADMITTED
        admitted += 1
    return admitted


@njit(cache=True, nogil=True, inline="always")
def _new_vertex(slots, shift, z, lz, ext, vlab, meta):  # type: ignore[no-untyped-def]
    k = meta[0]
    meta[0] = k + 1
    put(slots, shift, z, k)
    ext[k] = z
    vlab[k] = lz if lz >= 0 else 0
    return np.int32(k)


def grown(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` itself if it holds n elements, else a zero-padded copy at least twice as long."""
    if n <= a.shape[0]:
        return a
    out = np.zeros(max(n, 2 * a.shape[0]), a.dtype)
    out[: a.shape[0]] = a
    return out


def external_matches(
    ext: np.ndarray, internal: np.ndarray, nverts: np.ndarray, width: int
) -> np.ndarray:
    """Match rows in external ids: ``internal`` int32 (k, >= width) internal ids whose columns
    past each row's query size ``nverts`` (k,) are unwritten; returns int64 (k, width) with
    those columns set to -1."""
    pad = np.arange(width)[None, :] >= nverts[:, None]
    match = ext[np.where(pad, 0, internal[:, :width])]
    match[pad] = -1
    return match
