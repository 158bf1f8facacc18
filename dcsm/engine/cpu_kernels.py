"""Numba kernels of the CPU engine: the dynamic graph and backtracking enumeration.

Graph layout (all owned by :class:`dcsm.engine.cpu.CpuEngine`, passed in and out of every
kernel; internal vertex ids are dense int32 in first-seen order):

==========  ===========  ==========================================================
array       dtype        meaning
==========  ===========  ==========================================================
``ext``     int64 (V,)   external id of internal vertex x
``vlab``    int32 (V,)   label of x
``off``     int64 (V,)   start of x's neighbour list in the pool
``deg``     int32 (V,)   its length
``cap``     int32 (V,)   its capacity (a full list moves to the pool tail, doubled)
``nbr``     int32 (S,)   pool of neighbour ids; each list sorted ascending
``elab``    int32 (S,)   edge label beside each pool entry
``meta``    int64 (2,)   [number of vertices, pool tail]
``shared``  uint8 (V,)   1: x's list is also read by a snapshot (``static_snapshot``), so
                         the first change to it moves it to the pool tail first
==========  ===========  ==========================================================

A snapshot (:meth:`dcsm.engine.cpu.CpuEngine.static_snapshot`) copies ``off`` and ``deg``
and keeps reading the pool where the lists were: no kernel writes an entry of a list while
its ``shared`` flag is set (:func:`_insert_half` and :func:`_delete_half` move it first),
lists only move to the tail, and a repacked pool (:func:`compact`) is a new array.

Enumeration is depth-first over a plan (see :mod:`dcsm.engine.plan`): step i's candidates
are the neighbours of the backward neighbour with the smallest degree that pass the label,
injectivity and symmetry checks and appear (with the right edge label) in every other
backward neighbour's list, found by binary search. The last step is only counted, never
materialised, unless matches are emitted.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import ANY_LABEL as ANY
from ..model import MAX_PATTERN_VERTICES as K
from ..model import OUTCOME_APPLIED as APPLIED
from ..model import OUTCOME_NOOP as NOOP
from .bulk import InternedGraph, fill_lists, lower_counts

NO_STOP = np.iinfo(np.int64).max  # no cap on emitted matches


@njit(cache=True, nogil=True, inline="always")
def _find(nbr, start, length, x):
    """Index of x in nbr[start:start+length] (sorted), or -(insertion point) - 1."""
    lo = start
    hi = start + length
    while lo < hi:
        mid = (lo + hi) >> 1
        v = nbr[mid]
        if v < x:
            lo = mid + 1
        elif v > x:
            hi = mid
        else:
            return mid
    return -(lo - start) - 1


@njit(cache=True, nogil=True, inline="always")
def _relocate(a, newcap, off, deg, cap, nbr, elab, meta, shared):
    """Move a's list to the pool tail with room for ``newcap`` entries (it is full, or a
    snapshot still reads it where it is); the caller checked the pool has the room."""
    d = deg[a]
    t = meta[1]
    for k in range(d):
        nbr[t + k] = nbr[off[a] + k]
        elab[t + k] = elab[off[a] + k]
    off[a] = t
    cap[a] = newcap
    meta[1] = t + newcap
    shared[a] = 0


@njit(cache=True, nogil=True, inline="always")
def _room(a, growing, deg, cap, shared):
    """Pool entries a change to a's list may take at the tail: a full list growing moves
    doubled; a list a snapshot reads moves as it is."""
    if growing and deg[a] == cap[a]:
        return max(4, 2 * cap[a])
    return cap[a] if shared[a] else 0


@njit(cache=True, nogil=True)
def _insert_half(a, b, lab, off, deg, cap, nbr, elab, meta, shared):
    """Insert b into a's sorted list (the caller checked it is absent and the pool has room)."""
    d = deg[a]
    if d == cap[a]:
        _relocate(a, 4 if cap[a] == 0 else 2 * cap[a], off, deg, cap, nbr, elab, meta, shared)
    elif shared[a]:
        _relocate(a, cap[a], off, deg, cap, nbr, elab, meta, shared)
    s = off[a]
    r = _find(nbr, s, d, b)
    ins = -r - 1
    k = d
    while k > ins:
        nbr[s + k] = nbr[s + k - 1]
        elab[s + k] = elab[s + k - 1]
        k -= 1
    nbr[s + ins] = b
    elab[s + ins] = lab
    deg[a] = d + 1


@njit(cache=True, nogil=True)
def _delete_half(a, b, off, deg, cap, nbr, elab, meta, shared):
    """Remove b from a's sorted list (the caller checked it is there and the pool has room
    for a list a snapshot reads)."""
    if shared[a]:
        _relocate(a, cap[a], off, deg, cap, nbr, elab, meta, shared)
    s = off[a]
    d = deg[a]
    i = _find(nbr, s, d, b)
    for k in range(i, s + d - 1):
        nbr[k] = nbr[k + 1]
        elab[k] = elab[k + 1]
    deg[a] = d - 1


@njit(cache=True, nogil=True, inline="always")
def _gallop(nbr, lo, end, x):
    """The first index of nbr[lo:end] (sorted) whose value is >= x (end if none), searched
    from lo outwards in doubling steps: about log2 of the distance moved, so a scan whose
    probes rise walks a like-sized list in order rather than searching it whole each time."""
    if lo >= end or nbr[lo] >= x:
        return lo
    step = 1
    hi = lo + 1
    while hi < end and nbr[hi] < x:
        lo = hi
        step <<= 1
        hi = lo + step
    if hi > end:
        hi = end
    lo += 1  # nbr[lo - 1] < x; the answer is in [lo, hi]
    while lo < hi:
        mid = (lo + hi) >> 1
        if nbr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _candidates(i, p, m, store, cand, G, P):
    """Candidates for step i of plan p given the partial match m[0:i]; stores them in
    cand[i, :] when ``store``, returns how many there are. G and P are the graph and plan
    array tuples (see :func:`graph_arrays`, :func:`plan_arrays`)."""
    off, deg, nbr, elab, vlab, ext = G
    pos, vlabel, start_elabel, bn_cnt, bn_pos, bn_elabel, sym_lt, sym_gt = P[:8]
    nb = bn_cnt[p, i]
    # The backward neighbour with the shortest list drives the scan.
    best = 0
    bestdeg = deg[m[bn_pos[p, i, 0]]]
    for k in range(1, nb):
        dk = deg[m[bn_pos[p, i, k]]]
        if dk < bestdeg:
            best = k
            bestdeg = dk
    base = m[bn_pos[p, i, best]]
    base_lab = bn_elabel[p, i, best]
    want = vlabel[p, i]
    lt = sym_lt[p, i]
    gt = sym_gt[p, i]
    s0 = off[base]
    cnt = 0
    # The first two other lists to test (a cycle's closing step, a triangle's or a
    # 4-clique's) each get a cursor that only moves forward, as the scan's neighbours rise
    # (_gallop); any further one is searched whole.
    ka = 0 if best != 0 else 1  # the first other list
    kb = ka + 1 if ka + 1 != best else ka + 2  # the second
    a_end = a_cur = b_end = b_cur = 0
    if ka < nb:
        w = m[bn_pos[p, i, ka]]
        a_cur, a_end = off[w], off[w] + deg[w]
    if kb < nb:
        w = m[bn_pos[p, i, kb]]
        b_cur, b_end = off[w], off[w] + deg[w]
    for t in range(s0, s0 + bestdeg):
        c = nbr[t]
        if base_lab != ANY and elab[t] != base_lab:
            continue
        if want != ANY and vlab[c] != want:
            continue
        ok = True
        for j in range(i):
            if m[j] == c:
                ok = False
                break
        if not ok:
            continue
        if lt != 0 or gt != 0:
            ec = ext[c]
            for j in range(i):
                if (lt >> j) & 1 and not ec < ext[m[j]]:
                    ok = False
                    break
                if (gt >> j) & 1 and not ec > ext[m[j]]:
                    ok = False
                    break
            if not ok:
                continue
        for k in range(nb):
            if k == best:
                continue
            if k == ka:
                a_cur = _gallop(nbr, a_cur, a_end, c)
                r = a_cur if a_cur < a_end and nbr[a_cur] == c else -1
            elif k == kb:
                b_cur = _gallop(nbr, b_cur, b_end, c)
                r = b_cur if b_cur < b_end and nbr[b_cur] == c else -1
            else:
                w = m[bn_pos[p, i, k]]
                r = _find(nbr, off[w], deg[w], c)
            if r < 0:
                ok = False
                break
            lk = bn_elabel[p, i, k]
            if lk != ANY and elab[r] != lk:
                ok = False
                break
        if not ok:
            continue
        if store:
            cand[i, cnt] = c
        cnt += 1
    return cnt


def graph_arrays(off, deg, nbr, elab, vlab, ext):  # type: ignore[no-untyped-def]
    """The graph tuple G the kernels take: (off, deg, nbr, elab, vlab, ext)."""
    return (off, deg, nbr, elab, vlab, ext)


def plan_arrays(t):  # type: ignore[no-untyped-def]
    """The plan tuple P the kernels take, from a PlanTable (or a QueryPlan)."""
    return (
        t.pos, t.vlabel, t.start_elabel, t.bn_cnt, t.bn_pos, t.bn_elabel, t.sym_lt, t.sym_gt,
        t.weight, t.images, t.flip,
    )  # fmt: skip


@njit(cache=True, nogil=True)
def _grow_tags(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _grow_matches(a, need):
    if need <= a.shape[0]:
        return a
    b = np.empty((max(need, 2 * a.shape[0]), a.shape[1]), a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _emit(p, n, m, P, out_m, out_tag, nout, tag, stop):
    """Append match m (plan order) in query-vertex order, then the other matches it stands
    for (plan p's ``images``; weight[p] rows in all), while the fill level is below
    ``stop``, growing the buffers."""
    pos, weight, images = P[0], P[8], P[9]
    k = min(weight[p], stop - nout)
    out_m = _grow_matches(out_m, nout + k)
    out_tag = _grow_tags(out_tag, nout + k)
    for x in range(n):
        out_m[nout, x] = m[pos[p, x]]
    for r in range(1, k):
        for x in range(n):
            out_m[nout + r, x] = out_m[nout, images[p, r, x]]
    out_tag[nout : nout + k] = tag
    return out_m, out_tag, nout + k


@njit(cache=True, nogil=True)
def _extend(p, n, a, b, emit, stop, cand, m, G, P, out_m, out_tag, nout, tag):
    """Enumerate the matches of plan p that map its start edge to (a, b).

    Returns (count, out_m, out_tag, nout): when ``emit``, each match is appended to out_m
    (internal ids, query-vertex order) with ``tag`` in out_tag, followed by the other
    matches it stands for (:func:`_emit`), as long as the fill level ``nout`` stays below
    ``stop``; the buffers grow as needed. ``count``, the matches the plan finds (each
    stands for weight[p]), is always exact:
    once ``stop`` is reached the rest is counted like a count-mode query, the last step
    never materialised, so the buffers stay bounded (the per-query delta cap).
    """
    m[0] = a
    m[1] = b
    if n == 2:
        if emit and nout < stop:
            out_m, out_tag, nout = _emit(p, n, m, P, out_m, out_tag, nout, tag, stop)
        return 1, out_m, out_tag, nout
    total = 0
    last = n - 1
    ncand = np.zeros(K, np.int64)
    idx = np.zeros(K, np.int64)
    depth = 2
    if depth == last and (not emit or nout >= stop):
        total = _candidates(2, p, m, False, cand, G, P)
        return total, out_m, out_tag, nout
    ncand[2] = _candidates(2, p, m, True, cand, G, P)
    idx[2] = 0
    while depth >= 2:
        if idx[depth] >= ncand[depth]:
            depth -= 1
            continue
        m[depth] = cand[depth, idx[depth]]
        idx[depth] += 1
        if depth == last:  # stored last-step candidates: emitting, possibly up to the cap
            total += 1
            if nout < stop:
                out_m, out_tag, nout = _emit(p, n, m, P, out_m, out_tag, nout, tag, stop)
            continue
        depth += 1
        if depth == last and (not emit or nout >= stop):
            total += _candidates(depth, p, m, False, cand, G, P)
            depth -= 1
            continue
        ncand[depth] = _candidates(depth, p, m, True, cand, G, P)
        idx[depth] = 0
    return total, out_m, out_tag, nout


@njit(cache=True, nogil=True)
def _start_ok(p, a, b, lab, G, P):
    """Can plan p's start edge map onto data edge (a, b) with label lab?"""
    vlab, ext = G[4], G[5]
    vlabel, start_elabel, sym_lt, sym_gt = P[1], P[2], P[6], P[7]
    if vlabel[p, 0] != ANY and vlab[a] != vlabel[p, 0]:
        return False
    if vlabel[p, 1] != ANY and vlab[b] != vlabel[p, 1]:
        return False
    if start_elabel[p] != ANY and lab != start_elabel[p]:
        return False
    if sym_lt[p, 1] & 1 and not ext[b] < ext[a]:
        return False
    if sym_gt[p, 1] & 1 and not ext[b] > ext[a]:
        return False
    return True


@njit(cache=True, nogil=True)
def _flip_ends(p, a, b, deg, P):
    """Counting: run plan p on (b, a) instead of (a, b)? Only a plan that stands for its
    reversed start edge too (``flip``: :func:`dcsm.engine.plan.orbit_plans`), and only when
    its level 2, next to one end, would then scan the shorter list (gpu/mvg_read.cuh's
    ``flip_ends`` makes the same choice)."""
    bn_cnt, bn_pos, flip = P[3], P[4], P[10]
    if not flip[p] or bn_cnt[p, 2] != 1:
        return False
    return deg[b] < deg[a] if bn_pos[p, 2, 0] == 0 else deg[a] < deg[b]


@njit(cache=True, nogil=True)
def apply_updates(
    start, op, a_int, b_int, label, seq, G, cap, meta, shared, P, first, nverts, q_from,
    q_until, q_count, q_cap, cand, outcome, out_m, out_tag, nout, cnt_tag, cnt_val, ncnt,
):  # fmt: skip
    """Apply the admitted updates of [start:] in order (see :func:`dcsm.engine.intern.admit`,
    which set outcome and the internal ids a_int/b_int), matching each against live queries.

    Sets outcome[i] to APPLIED or NOOP for admitted updates; appends (from fill levels nout /
    ncnt) embedding-mode matches to out_m/out_tag (tag = update index * Q + query slot) and
    count-mode counts to cnt_tag/cnt_val (same tag). An embedding-mode query with a cap
    (``q_cap[q] >= 0``) emits at most that many matches per update and reports how many it
    did not emit in cnt_tag/cnt_val too (a slot is either count-mode or embedding-mode, so
    the caller tells the two apart by ``q_count``; each (update, query) has at most one
    row, so n * Q rows always fit). Stops early when the pool has no room for the lists the
    next update may move, returning its index so the caller can repack the pool and call
    again; otherwise returns len(op). Also returns the possibly regrown output buffers and
    their fill levels.
    """
    off, deg, nbr, elab = G[0], G[1], G[2], G[3]
    weight = P[8]  # > 1 for a plan standing for an orbit (plan.orbit_plans)
    nq = nverts.shape[0]
    m = np.empty(K, np.int32)
    for i in range(start, op.shape[0]):
        if outcome[i] != APPLIED:  # rejected at admission
            continue
        a = a_int[i]
        b = b_int[i]
        # Worst-case pool need: both lists move (doubled when full and growing).
        need = _room(a, op[i] > 0, deg, cap, shared) + _room(b, op[i] > 0, deg, cap, shared)
        if meta[1] + need > nbr.shape[0]:
            return i, out_m, out_tag, nout, ncnt
        if op[i] > 0:
            if _find(nbr, off[a], deg[a], b) >= 0:
                outcome[i] = NOOP
                continue
            _insert_half(a, b, label[i], off, deg, cap, nbr, elab, meta, shared)
            _insert_half(b, a, label[i], off, deg, cap, nbr, elab, meta, shared)
            elab_ab = label[i]
        else:
            r = _find(nbr, off[a], deg[a], b)
            if r < 0:
                outcome[i] = NOOP
                continue
            elab_ab = elab[r]
        s = seq[i]
        for q in range(nq):
            if s < q_from[q] or s >= q_until[q]:
                continue
            emit = not q_count[q]
            tag = i * nq + q
            total = 0
            nout0 = nout
            stop = nout + q_cap[q] if q_cap[q] >= 0 else NO_STOP
            for p in range(first[q], first[q + 1]):
                if not _start_ok(p, a, b, elab_ab, G, P):
                    continue
                x, y = (b, a) if not emit and _flip_ends(p, a, b, deg, P) else (a, b)
                c, out_m, out_tag, nout = _extend(
                    p, nverts[q], x, y, emit, stop, cand, m, G, P, out_m, out_tag, nout, tag
                )
                total += c * weight[p]
            if emit:
                total -= nout - nout0  # now: the matches the cap left out
            if total > 0:
                cnt_tag[ncnt] = tag
                cnt_val[ncnt] = total
                ncnt += 1
        if op[i] < 0:
            _delete_half(a, b, off, deg, cap, nbr, elab, meta, shared)
            _delete_half(b, a, off, deg, cap, nbr, elab, meta, shared)
    return op.shape[0], out_m, out_tag, nout, ncnt


@njit(cache=True, nogil=True)
def closed_wedges(off, deg, nbr, a, b):
    """How many of the pairs (a[k], b[k]) are edges."""
    closed = 0
    for k in range(len(a)):
        closed += _find(nbr, off[a[k]], deg[a[k]], b[k]) >= 0
    return closed


@njit(cache=True, nogil=True)
def static_matches(p, n, emit, stop, G, lo, hi, P, cand, out_m):
    """Every match of plan p over every ordered data edge (a, b) with ``lo <= a < hi``
    (each embedding once over all of [0, num_vertices)), in the order of a.

    Returns (count, out_m, nout); out_m holds internal ids when ``emit``, the first ``stop``
    matches (NO_STOP: all), each found match followed by the others it stands for (plan
    p's ``images``); the count (found matches x weight[p]) is always exact."""
    off, deg, nbr, elab, vlab = G[0], G[1], G[2], G[3], G[4]
    vlabel, weight = P[1], P[8]
    m = np.empty(K, np.int32)
    out_tag = np.empty(out_m.shape[0], np.int64)
    nout = 0
    total = 0
    for a in range(lo, hi):
        if vlabel[p, 0] != ANY and vlab[a] != vlabel[p, 0]:
            continue
        for t in range(off[a], off[a] + deg[a]):
            b = nbr[t]
            if not _start_ok(p, a, b, elab[t], G, P):
                continue
            c, out_m, out_tag, nout = _extend(
                p, n, a, b, emit, stop, cand, m, G, P, out_m, out_tag, nout, 0
            )
            total += c * weight[p]
    return total, out_m, nout


def bulk_load(
    g: InternedGraph,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The pool for a freshly interned graph: returns off, deg, cap, nbr, elab, tail. Each
    list gets capacity deg * 1.25 + 4; the pool is twice the lists' total (its free half is
    never written here, so it costs address space, not memory, until updates use it)."""
    nv = g.num_vertices
    low = lower_counts(g.start, g.hi)
    deg = (np.diff(g.start) + low).astype(np.int32)
    cap = deg + (deg >> 2) + 4
    off = np.zeros(nv, np.int64)
    np.cumsum(cap[:-1], out=off[1:])
    tail = int(off[-1] + cap[-1]) if nv else 0
    nbr = np.empty(2 * tail + 1024, np.int32)
    elab = np.empty(2 * tail + 1024, np.int32)
    fill_lists(g.start, g.lo, g.hi, g.elab, low, off, nbr, elab)
    return off, deg, cap, nbr, elab, tail


@njit(cache=True, nogil=True)
def compact(off, deg, cap, nbr, elab, nv, extra):
    """Repack every list tightly (capacity = deg * 1.25 + 4) into a new pool with ``extra``
    free slots at the tail; returns nbr, elab, tail and updates off/cap in place."""
    t = 0
    for x in range(nv):
        t += deg[x] + (deg[x] >> 2) + 4
    nn = np.empty(t + extra, np.int32)
    ne = np.empty(t + extra, np.int32)
    t = 0
    for x in range(nv):
        s = off[x]
        d = deg[x]
        nn[t : t + d] = nbr[s : s + d]
        ne[t : t + d] = elab[s : s + d]
        off[x] = t
        cap[x] = d + (d >> 2) + 4
        t += cap[x]
    return nn, ne, t


@njit(cache=True, nogil=True)
def export_edges(off, deg, nbr, elab, nv):
    """Each undirected edge once (internal ids, a < b) with its label."""
    total = 0
    for x in range(nv):
        total += deg[x]
    src = np.empty(total // 2, np.int32)
    dst = np.empty(total // 2, np.int32)
    lab = np.empty(total // 2, np.int32)
    k = 0
    for x in range(nv):
        for t in range(off[x], off[x] + deg[x]):
            if nbr[t] > x:
                src[k] = x
                dst[k] = nbr[t]
                lab[k] = elab[t]
                k += 1
    return src, dst, lab
