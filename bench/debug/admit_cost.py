"""Admission alone (``dcsm.engine.intern.admit``), timed without a GPU: ns an update over
pieces of 4,096 insertions of a power-law stream whose vertices are all interned already
(ids 0..V-1, as most datasets number them), best of ``--repeat``; it checks that every
update but a self loop was admitted with its endpoints' internal ids. Branch ``dense-ids``'s
admit takes the id table's dense window as a seventh argument; this script passes it when
the function asks for it, so one command measures either.

    python3 -P bench/debug/admit_cost.py [--vertices 37700] [--updates 231200]
"""

from __future__ import annotations

import argparse
import inspect
import time

import numpy as np

from dcsm.engine.idtable import IdTable
from dcsm.engine.intern import ADMITTED, admit
from dcsm.model import OUTCOME_SELF_LOOP


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vertices", type=int, default=37_700)
    ap.add_argument("--updates", type=int, default=231_200)
    ap.add_argument("--piece", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    nv, n, piece = args.vertices, args.updates, args.piece
    ids = IdTable()
    ids.ensure(nv + 2 * n)
    ext = np.zeros(nv + 2 * n, np.int64)
    vlab = np.zeros(nv + 2 * n, np.int32)
    meta = np.zeros(1, np.int64)
    windowed = "dense" in inspect.signature(admit.py_func).parameters
    unlabelled = np.full(max(nv, n), -1, np.int32)  # no vertex labels given

    def call(op, u, v, out, a, b):  # type: ignore[no-untyped-def]
        lab = unlabelled[: len(op)]
        tables = (ids.slots, ids.dense) if windowed else (ids.slots,)
        return admit(op, u, v, lab, lab, *tables, ext, vlab, meta, out, a, b)

    # Intern every vertex first: a path through all of them.
    m = nv - 1
    call(np.ones(m, np.int8), np.arange(m), np.arange(1, nv), np.zeros(m, np.int8),
         np.zeros(m, np.int32), np.zeros(m, np.int32))  # fmt: skip
    rng = np.random.default_rng(0)
    u = np.minimum((rng.pareto(1.3, n) * 50).astype(np.int64), nv - 1)
    v = rng.integers(0, nv, n)
    op = np.ones(n, np.int8)
    out, a, b = np.zeros(n, np.int8), np.zeros(n, np.int32), np.zeros(n, np.int32)
    best = float("inf")
    for _ in range(args.repeat):
        t = time.perf_counter()
        for lo in range(0, n, piece):
            hi = min(n, lo + piece)
            call(op[lo:hi], u[lo:hi], v[lo:hi], out[lo:hi], a[lo:hi], b[lo:hi])
        best = min(best, time.perf_counter() - t)
    # Every update admitted, its internal ids those of its endpoints; self loops refused.
    ok = u != v
    assert (out[ok] == ADMITTED).all() and (out[~ok] == OUTCOME_SELF_LOOP).all()
    assert (ext[a[ok]] == u[ok]).all() and (ext[b[ok]] == v[ok]).all()
    window = f"dense window of {len(ids.dense):,}" if windowed else "no dense window"
    print(f"admit: {best / n * 1e9:.1f} ns an update ({nv:,} vertices, {window})")


if __name__ == "__main__":
    main()
