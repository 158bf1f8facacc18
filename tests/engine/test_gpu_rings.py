"""The host end of the GPU engine's output ring: records decoded into match rows.

Pure numpy/numba, so it runs without a GPU: the ring is filled here the way the kernel's
executors fill it (body first, stamp last, positions wrapping around the ring)."""

from __future__ import annotations

import numpy as np

from dcsm.gpu.rings import STAMP_MOD, MatchRows, read_records


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


NVERTS = np.array([3, 2, 0, 0], np.int32)  # vertices of the query in each slot
QID = np.array([70, 71, -1, -1], np.int32)  # the query each slot serves
EXT = np.arange(100, dtype=np.int64) * 1000  # external id of internal vertex v


def test_records_decode_to_external_ids_padded_with_minus_one() -> None:
    ring = np.zeros(64, np.int32)
    end = put(ring, 0, 11, 0, [1, 2, 3])
    end = put(ring, end, 12, 1, [4, 5])
    rows = MatchRows(width=3)
    head, got = rows.read(ring, 0, NVERTS, EXT, QID, tau0=10)
    assert (head, got, rows.n) == (end, 2, 2)
    assert rows.upd[:2].tolist() == [1, 2]  # tau - tau0
    assert rows.qid[:2].tolist() == [70, 71]
    assert rows.match[:2].tolist() == [[1000, 2000, 3000], [4000, 5000, -1]]


def test_reading_stops_at_the_first_incomplete_record() -> None:
    ring = np.zeros(64, np.int32)
    a = put(ring, 0, 1, 1, [1, 2])
    b = put(ring, a, 2, 1, [3, 4], stamp=False)  # reserved, body written, stamp not yet
    put(ring, b, 3, 1, [5, 6])  # complete, but after the incomplete one
    rows = MatchRows(width=2)
    head, got = rows.read(ring, 0, NVERTS, EXT, QID, tau0=0)
    assert (head, got) == (a, 1)
    ring[a] = a % STAMP_MOD + 1  # the stamp lands
    head, got = rows.read(ring, head, NVERTS, EXT, QID, tau0=0)
    assert got == 2 and rows.match[:3, 0].tolist() == [1000, 3000, 5000]


def test_a_stale_record_of_an_earlier_lap_is_not_read() -> None:
    cap = 16
    ring = np.zeros(cap, np.int32)
    put(ring, 0, 1, 1, [1, 2])  # lap 0 at position 0
    rows = MatchRows(width=2)
    head, got = rows.read(ring, cap, NVERTS, EXT, QID, tau0=0)  # lap 1 expects another stamp
    assert (head, got) == (cap, 0)


def test_records_wrap_around_the_ring_end() -> None:
    cap = 10
    ring = np.zeros(cap, np.int32)
    start = 7  # body crosses the end of the ring
    end = put(ring, start, 5, 0, [7, 8, 9])
    rows = MatchRows(width=3)
    head, got = rows.read(ring, start, NVERTS, EXT, QID, tau0=0)
    assert (head, got) == (end, 1)
    assert rows.match[0].tolist() == [7000, 8000, 9000]


def test_rows_grow_past_their_first_capacity() -> None:
    n = 1000
    ring = np.zeros(n * 5 + 8, np.int32)
    pos = 0
    for i in range(n):
        pos = put(ring, pos, i, 1, [i % 100, (i + 1) % 100])
    rows = MatchRows(width=2, capacity=16)
    head, total = 0, 0
    while True:
        head, got = rows.read(ring, head, NVERTS, EXT, QID, tau0=0, rows=64)
        total += got
        if got < 64:
            break
    assert total == rows.n == n
    assert rows.upd[:n].tolist() == list(range(n))
    assert (rows.match[:n, 1] == EXT[(np.arange(n) + 1) % 100]).all()


def test_read_records_fills_only_the_buffer_it_is_given() -> None:
    ring = np.zeros(64, np.int32)
    pos = 0
    for i in range(5):
        pos = put(ring, pos, i, 1, [1, 2])
    upd = np.zeros(3, np.int32)
    qid = np.zeros(3, np.int32)
    match = np.zeros((3, 2), np.int64)
    head, k = read_records(ring, 0, NVERTS, EXT, QID, 0, upd, qid, match, 1)
    assert (head, k) == (2 * 5, 3)  # rows 1 and 2: two records of five words
