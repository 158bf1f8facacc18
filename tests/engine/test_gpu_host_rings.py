"""The host ends of the GPU engine's input and completion rings (``encode_updates``,
``drain_done``): pure numba, so they run without a GPU. The completion ring is filled the way
the kernel's finishing warps fill it (counts and times, then ``tau`` last) and checked
against a plain per-record reading of the same ring; records are checked against numpy
field by field."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.gpu import layout as L
from dcsm.gpu.rings import drain_done, encode_updates, encode_updates_parallel

MAXU, QMAX = 64, 4
LIVE = np.array([0, 2, 3], np.int64)  # live query slots; slot 2 ships match records
LIVE_COUNT = np.array([True, False, True])
OFF = 1_000_000_000


def fill(rng: np.random.Generator, first: int, n: int, missing: int | None):
    """Completion records of updates first .. first + n - 1 (ring slot tau % MAXU, so
    they wrap), the one at `missing` not yet stamped (its slot holds a stale lap)."""
    done = np.zeros(MAXU, L.DONE)
    done["tau"] = -1
    # Words the device does not write hold stale counts of an earlier lap: to be ignored.
    counts = rng.integers(1, 9, (QMAX, MAXU)).astype(np.uint64)
    for t in range(first, first + n):
        s = t % MAXU
        done[s]["outcome"] = rng.integers(0, 2)
        done[s]["t_taken"], done[s]["t_start"], done[s]["t_finish"] = 10 * t, 10 * t + 3, 10 * t + 7
        if rng.random() < 0.7:  # else no work item: every count zero
            c = rng.integers(0, 3, QMAX)
            counts[c != 0, s] = c[c != 0]
            done[s]["nonzero"] = sum(1 << q for q in range(QMAX) if c[q])
        done[s]["tau"] = t if t != missing else t - MAXU
    return done, counts


def reference(done, counts, first, limit, tau0, nsent):
    """Record by record, as the host read the ring before drain_done."""
    m = 0
    while first + m < limit and done["tau"][(first + m) % MAXU] == first + m:
        m += 1
    out = {"outcome": {}, "times": {}, "rows": [], "expect": 0}
    for t in range(first, first + m):
        s, i = t % MAXU, t - tau0
        mine = 0 <= i < nsent
        if mine:
            out["outcome"][i] = int(done["outcome"][s])
            out["times"][i] = tuple(
                (int(done[f][s]) + OFF) / 1e9 for f in ("t_taken", "t_start", "t_finish")
            )
        for c, slot in enumerate(LIVE):
            v = int(counts[slot, s]) if done["nonzero"][s] >> slot & 1 else 0
            if v and not LIVE_COUNT[c]:
                out["expect"] += v
            elif v and mine:
                out["rows"].append((i, c, v))
    return m, out


@pytest.mark.parametrize("seed", range(8))
def test_drain_done_reads_what_a_record_by_record_reader_reads(seed: int) -> None:
    rng = np.random.default_rng(seed)
    first = int(rng.integers(1, 200))
    n = int(rng.integers(0, MAXU))
    missing = first + int(rng.integers(0, n)) if n and seed % 2 else None
    done, counts = fill(rng, first, n, missing)
    # The caller's updates: a window that may start before and end after the records.
    tau0 = first + int(rng.integers(-5, 5))
    nsent = int(rng.integers(0, n + 5))
    limit = first + int(rng.integers(0, n + 3))
    outs = [np.zeros(max(nsent, 1), np.int8)] + [np.zeros(max(nsent, 1)) for _ in range(3)]
    fields = tuple(done[f] for f in ("tau", "outcome", "nonzero", "t_taken", "t_start", "t_finish"))
    m, expect, row_i, row_col, row_n = drain_done(
        *fields, counts, first, limit, LIVE, LIVE_COUNT, tau0, nsent, OFF, *outs
    )
    want_m, want = reference(done, counts, first, limit, tau0, nsent)
    assert m == want_m
    assert expect == want["expect"]
    assert list(zip(row_i.tolist(), row_col.tolist(), row_n.tolist(), strict=True)) == want["rows"]
    for i, o in want["outcome"].items():
        assert outs[0][i] == o
        assert (outs[1][i], outs[2][i], outs[3][i]) == pytest.approx(want["times"][i])
    untouched = set(range(nsent)) - set(want["outcome"])
    assert all(outs[0][i] == 0 and outs[1][i] == 0 for i in untouched)
    if missing is not None and missing < limit:
        assert first + m == missing  # stops at the first record not yet complete


@pytest.mark.parametrize("encode", [encode_updates, encode_updates_parallel],
                         ids=["one-thread", "parallel"])  # fmt: skip
def test_encode_updates_fills_every_field_as_numpy_does(encode) -> None:  # type: ignore[no-untyped-def]
    """Every field, by ``encode_updates`` and by its parallel twin; a label not given is
    vlab's for a vertex at or past ``known`` (created by this admission) and -1 for one the
    device has."""
    rng = np.random.default_rng(3)
    nv, n, now = 50, 300, 1_700_000_000_123_456_789
    vlab = rng.integers(0, 4, nv).astype(np.int32)
    ext = rng.integers(-(10**15), 10**15, nv)
    op = np.where(rng.random(n) < 0.6, 1, -1).astype(np.int8)
    ia, ib = rng.integers(0, nv, n).astype(np.int32), rng.integers(0, nv, n).astype(np.int32)
    elabel = rng.integers(0, 3, n).astype(np.int32)
    ts = np.where(rng.random(n) < 0.5, 1.7e9 + rng.random(n), 0.0)  # 0: not paced
    # Admitted updates: their endpoints' external ids, and labels given or not (-1).
    u, v = ext[ia], ext[ib]
    u_label = np.where(rng.random(n) < 0.5, vlab[ia], -1).astype(np.int32)
    v_label = np.where(rng.random(n) < 0.5, vlab[ib], -1).astype(np.int32)
    recs = np.empty(n, L.IN_REC)
    known = 30
    words = recs.view(np.int64).reshape(n, L.IN_REC.itemsize // 8)  # the fields, as words
    encode(words, op, ia, ib, elabel, u, v, u_label, v_label, vlab, known, ts, now)
    np.testing.assert_array_equal(recs["kind"], np.where(op > 0, L.REC_INSERT, L.REC_DELETE))
    np.testing.assert_array_equal(recs["a"], ia)
    np.testing.assert_array_equal(recs["b"], ib)
    np.testing.assert_array_equal(recs["label"], elabel)
    for side, ids, given in (("a_label", ia, u_label), ("b_label", ib, v_label)):
        want = np.where(given >= 0, given, np.where(ids >= known, vlab[ids], -1))
        np.testing.assert_array_equal(recs[side], want)
        assert (recs[side] == -1).any() and (recs[side] >= 0).any()
    np.testing.assert_array_equal(recs["ext_a"], ext[ia])
    np.testing.assert_array_equal(recs["ext_b"], ext[ib])
    # Exact for the unpaced ones (a float64 detour would round `now` by tens of ns).
    want = np.where(ts > 0, (ts * 1e9).astype(np.int64), now)
    np.testing.assert_array_equal(recs["arrival_ns"], want)
