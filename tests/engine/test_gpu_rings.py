"""The host end of the GPU engine's output ring: records decoded into ordered match rows.

Pure numpy/numba, so it runs without a GPU: the ring is filled here the way the kernel's
executors fill it (body first, stamp last, positions wrapping around the ring)."""

from __future__ import annotations

import numpy as np

from dcsm.gpu.rings import STAMP_MOD, MatchRows, read_records

NVERTS = np.array([3, 2, 0, 0], np.int32)  # vertices of the query in each slot
QID = np.array([71, 70, -1, -1], np.int32)  # the query each slot serves
EXT = np.arange(100, dtype=np.int64) * 1000  # external id of internal vertex v
ALL = 1 << 10  # decode up to this many records per read


def put(
    ring: np.ndarray, pos: int, tau: int, slot: int, verts: list[int], stamp: bool = True
) -> int:
    """Write one record at absolute position pos; returns the next position."""
    cap = len(ring)
    for j, w in enumerate([tau, slot, *verts]):
        ring[(pos + 1 + j) % cap] = w
    if stamp:
        ring[pos % cap] = pos % STAMP_MOD + 1
    return pos + 3 + len(verts)


def ordered(rows: MatchRows, n_updates: int = 1000) -> tuple[np.ndarray, ...]:
    """Rows of updates 0..n-1 with sign +1 and seq 100 + index."""
    sent = np.arange(n_updates, dtype=np.int64)
    op = np.ones(n_updates, np.int8)
    return rows.ordered(sent, op, 100 + sent, QID, EXT)


def test_records_decode_to_external_ids_padded_with_minus_one() -> None:
    ring = np.zeros(64, np.int32)
    end = put(ring, 0, 11, 0, [1, 2, 3])
    end = put(ring, end, 12, 1, [4, 5])
    rows = MatchRows(width=3)
    head, got = rows.read(ring, 0, NVERTS, 10, ALL)
    assert (head, got, rows.n) == (end, 2, 2)
    q, sign, seq, match = ordered(rows)
    assert q.tolist() == [71, 70] and sign.tolist() == [1, 1]
    assert seq.tolist() == [101, 102]  # update tau - tau0
    assert match.tolist() == [[1000, 2000, 3000], [4000, 5000, -1]]


def test_rows_come_out_by_update_then_query_id() -> None:
    ring = np.zeros(256, np.int32)
    pos = 0
    # Arrival order mixes updates and queries; within (update, query) it must be kept.
    for tau, slot, v in [(3, 0, 1), (1, 0, 2), (3, 1, 3), (1, 1, 4), (3, 1, 5), (2, 0, 6)]:
        pos = put(ring, pos, tau, slot, [v] * NVERTS[slot])
    rows = MatchRows(width=3)
    rows.read(ring, 0, NVERTS, 1, ALL)
    q, _, seq, match = ordered(rows)
    assert seq.tolist() == [100, 100, 101, 102, 102, 102]
    assert q.tolist() == [70, 71, 71, 70, 70, 71]  # query 70 is slot 1
    assert match[:, 0].tolist() == [4000, 2000, 6000, 3000, 5000, 1000]


def test_reading_stops_at_the_first_incomplete_record() -> None:
    ring = np.zeros(64, np.int32)
    a = put(ring, 0, 1, 1, [1, 2])
    b = put(ring, a, 2, 1, [3, 4], stamp=False)  # reserved, body written, stamp not yet
    put(ring, b, 3, 1, [5, 6])  # complete, but after the incomplete one
    rows = MatchRows(width=2)
    head, got = rows.read(ring, 0, NVERTS, 0, ALL)
    assert (head, got) == (a, 1)
    ring[a] = a % STAMP_MOD + 1  # the stamp lands
    head, got = rows.read(ring, head, NVERTS, 0, ALL)
    assert got == 2 and ordered(rows)[3][:, 0].tolist() == [1000, 3000, 5000]


def test_a_stale_record_of_an_earlier_lap_is_not_read() -> None:
    cap = 16
    ring = np.zeros(cap, np.int32)
    put(ring, 0, 1, 1, [1, 2])  # lap 0 at position 0
    rows = MatchRows(width=2)
    assert rows.read(ring, cap, NVERTS, 0, ALL) == (cap, 0)  # lap 1: another stamp


def test_records_wrap_around_the_ring_end() -> None:
    cap = 10
    ring = np.zeros(cap, np.int32)
    start = 7  # the body crosses the end of the ring
    end = put(ring, start, 5, 0, [7, 8, 9])
    rows = MatchRows(width=3)
    assert rows.read(ring, start, NVERTS, 0, ALL) == (end, 1)
    assert ordered(rows)[3].tolist() == [[7000, 8000, 9000]]


def test_stamps_wrap_past_2_to_the_31() -> None:
    """A long-running ring passes position 2^31 - 1, where stamps start again from 1: the
    reader's running stamp wraps with them (records before, across and after the wrap)."""
    cap = 64
    ring = np.zeros(cap, np.int32)
    start = pos = STAMP_MOD - 8
    for tau in range(6):
        pos = put(ring, pos, tau, tau % 2, [1, 2, 3][: NVERTS[tau % 2]])
    rows = MatchRows(width=3)
    assert rows.read(ring, start, NVERTS, 0, ALL) == (pos, 6)
    assert [r[0] for r in ordered(rows)[3].tolist()] == [1000] * 6


def test_rows_fill_many_chunks_in_small_reads() -> None:
    n = 1000
    ring = np.zeros(n * 5 + 8, np.int32)
    pos = 0
    for i in range(n):
        pos = put(ring, pos, n - i, 1, [i % 100, (i + 1) % 100])  # newest update first
    rows = MatchRows(width=2, chunk_rows=16)
    head, total = 0, 0
    while True:
        head, got = rows.read(ring, head, NVERTS, 1, 64)
        total += got
        if got < 64:
            break
    assert total == rows.n == n
    _, _, seq, match = ordered(rows, n)
    assert seq.tolist() == list(range(100, 100 + n))
    i = n - 1 - np.arange(n)  # the record of update k was written i-th
    assert (match[:, 1] == EXT[(i + 1) % 100]).all()


def test_clear_keeps_one_chunk_for_reuse() -> None:
    ring = np.zeros(64, np.int32)
    put(ring, 0, 1, 1, [1, 2])
    rows = MatchRows(width=2, chunk_rows=4)
    rows.read(ring, 0, NVERTS, 0, ALL)
    rows.clear()
    assert rows.n == 0 and len(rows.chunks) == 1


def test_read_records_fills_only_the_buffer_it_is_given() -> None:
    ring = np.zeros(64, np.int32)
    pos = 0
    for i in range(5):
        pos = put(ring, pos, i, 1, [1, 2])
    upd = np.zeros(3, np.int32)
    slot = np.zeros(3, np.int32)
    match = np.zeros((3, 2), np.int32)
    head, k = read_records(ring, 0, NVERTS, 0, upd, slot, match, 1)
    assert (head, k) == (2 * 5, 3)  # rows 1 and 2: two records of five words


def test_ordering_equals_a_stable_sort_by_update_then_query() -> None:
    """Many records of three queries over many chunks, against numpy's stable lexsort (the
    ordering pass splits the updates among threads)."""
    rng = np.random.default_rng(5)
    nverts = np.array([2, 2, 2, 0], np.int32)
    slot_qid = np.array([9, 4, 7, -1], np.int32)
    n, n_updates = 3000, 200
    tau = rng.integers(0, n_updates, n)
    slot = rng.integers(0, 3, n)
    verts = rng.integers(0, 100, (n, 2))
    ring = np.zeros(n * 5 + 8, np.int32)
    pos = 0
    for r in range(n):
        pos = put(ring, pos, int(tau[r]), int(slot[r]), verts[r].tolist())
    rows = MatchRows(width=2, chunk_rows=256)
    rows.read(ring, 0, nverts, 0, n)
    sent = np.sort(rng.choice(10 * n_updates, n_updates, replace=False)).astype(np.int64)
    op = rng.choice(np.array([-1, 1], np.int8), 10 * n_updates)
    seq = np.arange(10 * n_updates, dtype=np.int64) + 1000
    q, sign, s, match = rows.ordered(sent, op, seq, slot_qid, EXT)
    order = np.lexsort((slot_qid[slot], tau))  # stable: arrival order within (update, query)
    assert q.tolist() == slot_qid[slot][order].tolist()
    assert s.tolist() == seq[sent[tau]][order].tolist()
    assert sign.tolist() == op[sent[tau]][order].tolist()
    assert (match == EXT[verts[order]]).all()


def test_warm_up_compiles_what_an_embeddings_apply_runs() -> None:
    """rings.warm_up (GpuEngine's constructor calls it) compiles the decoders for the
    argument types an apply passes: decoding afterwards compiles nothing new."""
    from dcsm.gpu import rings

    rings.warm_up()
    decoders = (rings.read_records, rings._count, rings._place)
    compiled = [len(f.signatures) for f in decoders]
    assert all(compiled), compiled
    ring = np.zeros(256, np.int32)
    put(ring, 0, 1, 0, [1, 2, 3])
    rows = MatchRows(width=3)
    rows.read(ring, 0, NVERTS, 1, ALL)
    ordered(rows)
    assert [len(f.signatures) for f in decoders] == compiled
