"""Host-side admission of edge updates: external ids to dense internal ids, and the
per-update rejections both engines share (self loops, vertex label conflicts).

A vertex's label is fixed when it is first seen (in the initial graph or an accepted update
that creates it); an unlabelled first sighting gets label 0. Deletions never create vertices:
a deletion touching an unknown vertex is a no-op.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..model import OUTCOME_APPLIED, OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP, OUTCOME_SELF_LOOP

# Outcome used for updates that passed admission; the engine decides applied vs no-op.
ADMITTED = OUTCOME_APPLIED


@njit(cache=True)
def admit(op, u, v, u_label, v_label, idmap, ext, vlab, meta, outcome, a_out, b_out):
    """Admit updates in order. For each update i: outcome[i] is OUTCOME_SELF_LOOP,
    OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP (deletion of an unknown vertex) or ADMITTED with
    a_out/b_out the internal ids (interning new vertices of insertions into idmap, ext, vlab;
    meta[0] counts vertices). The caller guarantees ext/vlab have room for 2 * len(op) more.
    """
    for i in range(op.shape[0]):
        x = u[i]
        y = v[i]
        if x == y:
            outcome[i] = OUTCOME_SELF_LOOP
            continue
        lx = u_label[i]
        ly = v_label[i]
        if (lx >= 0 and x in idmap and vlab[idmap[x]] != lx) or (
            ly >= 0 and y in idmap and vlab[idmap[y]] != ly
        ):
            outcome[i] = OUTCOME_LABEL_CONFLICT
            continue
        if op[i] < 0:
            if x not in idmap or y not in idmap:
                outcome[i] = OUTCOME_NOOP
                continue
        for end in range(2):
            z = x if end == 0 else y
            lz = lx if end == 0 else ly
            if z not in idmap:
                k = meta[0]
                meta[0] = k + 1
                idmap[z] = np.int32(k)
                ext[k] = z
                vlab[k] = lz if lz >= 0 else 0
        a_out[i] = idmap[x]
        b_out[i] = idmap[y]
        outcome[i] = ADMITTED


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
