"""The id hash table (dcsm/engine/idtable.py) against a Python dict, and admission
(dcsm/engine/intern.py) against a line-by-line Python model of its documented rules."""

from __future__ import annotations

import numpy as np
import pytest

from dcsm.engine import idtable
from dcsm.engine.idtable import DuplicateKeyError, IdTable, distinct
from dcsm.engine.intern import ADMITTED, admit, admit_looked_up, look_up_parallel
from dcsm.model import OUTCOME_LABEL_CONFLICT, OUTCOME_NOOP, OUTCOME_SELF_LOOP

I64 = np.iinfo(np.int64)


def awkward_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    """Distinct int64 keys: negatives, the extremes, runs of consecutive ids, multiples of
    a large power of two (all equal in their low bits), and random ones."""
    parts = [
        np.array([0, -1, 1, I64.min, I64.max, I64.min + 1, I64.max - 1], np.int64),
        np.arange(-50, 50, dtype=np.int64),
        np.arange(1, 200, dtype=np.int64) << 40,
        rng.integers(I64.min, I64.max, n, dtype=np.int64, endpoint=True),
    ]
    keys = np.unique(np.concatenate(parts))
    return keys[rng.permutation(len(keys))]


@pytest.mark.parametrize("parts", [1, 2, 13])
def test_bulk_insert_and_lookup_match_a_dict(monkeypatch: pytest.MonkeyPatch, parts: int) -> None:
    """With many parts, keys near each part's end probe into the next one and are placed
    by the sequential second step: lookups must find them all the same."""
    monkeypatch.setattr(idtable, "_threads", lambda n: parts)
    rng = np.random.default_rng(parts)
    keys = awkward_keys(rng, 3000)
    vals = rng.permutation(len(keys)).astype(np.int64)
    table = IdTable.from_keys(keys, vals)
    assert len(table) == len(keys) and table.capacity >= 2 * len(keys)
    want = dict(zip(keys.tolist(), vals.tolist(), strict=True))
    assert table.lookup(keys).tolist() == vals.tolist()
    absent = rng.integers(I64.min, I64.max, 5000, dtype=np.int64)
    absent = absent[~np.isin(absent, keys)]
    assert (table.lookup(absent) == -1).all() and len(absent) > 4000
    mixed = np.concatenate([keys[:500], absent[:500]])
    assert table.lookup(mixed).tolist() == [want.get(k, -1) for k in mixed.tolist()]


def test_growth_keeps_every_key() -> None:
    rng = np.random.default_rng(5)
    keys = awkward_keys(rng, 20000)
    table = IdTable(room=4)
    cap0 = table.capacity
    for k0 in range(0, len(keys), 997):  # grow in uneven steps, as admission does
        batch = keys[k0 : k0 + 997]
        table.ensure(k0 + len(batch))
        table.insert(batch, np.arange(k0, k0 + len(batch)))
        assert 2 * (k0 + len(batch)) <= table.capacity
    assert table.capacity > cap0 and len(table) == len(keys)
    assert table.lookup(keys).tolist() == list(range(len(keys)))
    absent = np.setdiff1d(np.arange(-1000, 1000, dtype=np.int64), keys)
    assert len(absent) > 1500 and (table.lookup(absent) == -1).all()


def test_duplicates_are_reported_and_the_first_value_kept() -> None:
    table = IdTable.from_keys(np.array([7, -7, I64.max], np.int64))
    with pytest.raises(DuplicateKeyError) as info:
        table.insert(np.array([8, -7, 9], np.int64), np.array([10, 11, 12]))
    assert info.value.key == -7
    assert table.lookup(np.array([-7, 8, 9, 7], np.int64)).tolist() == [1, 10, 12, 0]
    with pytest.raises(DuplicateKeyError):
        IdTable.from_keys(np.array([3, 4, 3], np.int64))
    with pytest.raises(ValueError, match="0..2"):
        IdTable().insert(np.array([1], np.int64), np.array([-1]))


def test_distinct_keeps_first_seen_order() -> None:
    rng = np.random.default_rng(2)
    xs = rng.choice(awkward_keys(rng, 100), 5000)
    _, first = np.unique(xs, return_index=True)
    assert distinct(xs).tolist() == xs[np.sort(first)].tolist()
    assert distinct(np.zeros(0, np.int64)).tolist() == []


def admit_model(rows, ids, labels):  # type: ignore[no-untyped-def]
    """The admission rules, one update at a time, on a dict (ids) and a list (labels)."""
    out = []
    for op, x, y, lx, ly in rows:
        if x == y:
            out.append((OUTCOME_SELF_LOOP, None, None))
            continue
        if (lx >= 0 and x in ids and labels[ids[x]] != lx) or (
            ly >= 0 and y in ids and labels[ids[y]] != ly
        ):
            out.append((OUTCOME_LABEL_CONFLICT, None, None))
            continue
        if op < 0 and (x not in ids or y not in ids):
            out.append((OUTCOME_NOOP, None, None))
            continue
        for z, lz in ((x, lx), (y, ly)):
            if z not in ids:
                ids[z] = len(labels)
                labels.append(max(lz, 0))
        out.append((ADMITTED, ids[x], ids[y]))
    return out


@pytest.mark.parametrize("parallel", [False, True], ids=["admit", "parallel-lookups"])
@pytest.mark.parametrize("seed", range(4))
def test_admit_follows_the_rules_update_by_update(seed: int, parallel: bool) -> None:
    """``admit``, or its lookups spread over numba's threads and then its decisions (as
    GpuEngine with ``host_threads`` admits)."""
    rng = np.random.default_rng(seed)
    pool = awkward_keys(rng, 60)[:300]
    known = pool[:30]
    table = IdTable.from_keys(known)
    ids = {int(k): i for i, k in enumerate(known)}
    labels = rng.integers(0, 3, len(known)).tolist()
    cap = len(known) + 2 * 600
    ext = np.zeros(cap, np.int64)
    vlab = np.zeros(cap, np.int32)
    ext[: len(known)], vlab[: len(known)] = known, labels
    meta = np.array([len(known)], np.int64)
    seen = set()
    for _ in range(3):  # several calls: vertices created by one are known to the next
        n = 200
        op = rng.choice(np.array([1, 1, -1], np.int8), n)
        u, v = rng.choice(pool, n), rng.choice(pool, n)
        v = np.where(rng.random(n) < 0.05, u, v)  # some self loops
        lu = np.where(rng.random(n) < 0.5, rng.integers(0, 3, n), -1)
        lv = np.where(rng.random(n) < 0.5, rng.integers(0, 3, n), -1)
        want = admit_model(zip(op.tolist(), u.tolist(), v.tolist(), lu.tolist(), lv.tolist(),
                               strict=True), ids, labels)  # fmt: skip
        table.ensure(int(meta[0]) + 2 * n)
        outcome = np.full(n, -9, np.int8)
        a = np.zeros(n, np.int32)
        b = np.zeros(n, np.int32)
        if parallel:
            look_up_parallel(u, v, table.slots, a, b)
            admitted = admit_looked_up(op, u, v, lu, lv, table.slots, ext, vlab, meta, outcome,
                                       a, b)  # fmt: skip
        else:
            admitted = admit(op, u, v, lu, lv, table.slots, ext, vlab, meta, outcome, a, b)
        assert admitted == int((outcome == ADMITTED).sum())
        got = [
            (int(o), int(x), int(y)) if o == ADMITTED else (int(o), None, None)
            for o, x, y in zip(outcome, a, b, strict=True)
        ]
        assert got == want
        assert (a[outcome != ADMITTED] == -1).all() and (b[outcome != ADMITTED] == -1).all()
        seen |= {o for o, _, _ in want}
        nv = int(meta[0])
        assert nv == len(labels) and vlab[:nv].tolist() == labels
        assert table.lookup(ext[:nv]).tolist() == list(range(nv))
    assert seen == {ADMITTED, OUTCOME_SELF_LOOP, OUTCOME_NOOP, OUTCOME_LABEL_CONFLICT}
