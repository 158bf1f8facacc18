"""Host ends of the device -> host rings (pinned memory written by the kernel).

Input ring: ``encode_updates`` writes the InRec records of admitted updates in one pass, as
rows of int64 words (into the ring itself where it has room).

Completion ring: one ``Done`` record per update slot ``tau % MAXU`` and its non-zero counts
(a (QMAX, MAXU) array: a query's counts of consecutive updates lie together; ``nonzero``
says which were written); ``tau`` is written last, so the record of update t is complete
once its ``tau`` equals t. ``drain_done`` reads a run of them in one pass.

Output ring: int32 records ``[stamp, tau, slot, v0 .. v(n-1)]`` at absolute int positions;
``stamp = pos % (2**31 - 1) + 1`` is written last, so a record is complete once its stamp
matches its position (a stale record of an earlier lap has another stamp). Records are
reserved in order but completed out of order: the reader stops at the first incomplete one.

Records are decoded in one pass into fixed-size chunks of rows (internal vertex ids), never
copied while a run grows, and put in (update, query) order by a counting sort at the end,
whose threads also turn the ids into external ones.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

STAMP_MOD = 0x7FFFFFFF


@njit(cache=True)
def read_records(ring, head, nverts, tau0, upd, slot, match, k):  # type: ignore[no-untyped-def]
    """Decode complete records from absolute position ``head`` into rows k.. of ``upd``
    (tau - tau0), ``slot`` and ``match`` (internal vertex ids, -1 past the query's size),
    until an incomplete record or a full buffer. Returns (new head, new k). The external
    ids are looked up later, by :func:`_place` on every thread: one after another here, the
    lookups of a graph of 5M vertices (a 40 MB table) cost ~100 ns a record of 5."""
    cap = ring.shape[0]
    width = match.shape[1]
    # The record at head: its ring slot and the stamp it must carry, both advanced with the
    # head record by record (no division a record).
    at = head % cap
    want = head % STAMP_MOD + 1
    while k < upd.shape[0]:
        if ring[at] != want:
            break
        p = at + 1 if at + 1 < cap else 0
        tau = ring[p]
        p = p + 1 if p + 1 < cap else 0
        s = ring[p]
        n = nverts[s]
        for x in range(n):
            p = p + 1 if p + 1 < cap else 0
            match[k, x] = ring[p]
        for x in range(n, width):
            match[k, x] = -1
        upd[k] = tau - tau0
        slot[k] = s
        k += 1
        head += 3 + n
        at = p + 1 if p + 1 < cap else 0
        want += 3 + n
        if want > STAMP_MOD:
            want -= STAMP_MOD
    return head, k


@njit(cache=True, nogil=True, inline="always")
def _pair(lo, hi):  # type: ignore[no-untyped-def]
    """Two int32 fields as the int64 word that holds them (little-endian: ``lo`` first)."""
    return (np.int64(lo) & 0xFFFFFFFF) | (np.int64(hi) << 32)


@njit(cache=True, nogil=True)
def encode_updates(out, op, ia, ib, elabel, u, v, u_label, v_label, vlab, known, ts, now_ns):  # type: ignore[no-untyped-def]
    """Write the InRec records of admitted updates, one a row of ``out`` (int64, 6 words a
    record: kind | a, b | label, a_label | b_label, ext_a, ext_b, arrival_ns, the int32
    pairs little-endian as :data:`.layout.IN_REC` lays them out), in one pass: op > 0
    inserts, internal ids ia/ib, edge label, the endpoints' external ids u/v and labels,
    arrival ``ts`` (epoch seconds; 0: now_ns). ``out`` may be the input ring itself.
    An endpoint's label is the update's own, else, for a vertex admission created (id >=
    ``known``, the vertices the device was sent before), ``vlab``'s, else -1: the device
    has it already. So an unlabelled update costs no table read (~80 ns an update at 4.8M
    vertices on the 2-core host: a cache miss each, ``bench/debug/host_path_cost.py``).
    Whole words, not nine strided fields: 3.1 against 5.0 ns an update on the 2-core
    host."""
    # The body is written out here and in encode_updates_parallel: as one njit helper
    # called a record with the 13 arrays, it ran 13x slower (188 us a piece of 4,096 with
    # inline="always", 227 without, against 14.6 on the development host; session 33).
    for k in range(op.shape[0]):
        x, y = ia[k], ib[k]
        a_label = u_label[k] if u_label[k] >= 0 else (vlab[x] if x >= known else -1)
        b_label = v_label[k] if v_label[k] >= 0 else (vlab[y] if y >= known else -1)
        out[k, 0] = _pair(1 if op[k] > 0 else 2, x)  # REC_INSERT, REC_DELETE
        out[k, 1] = _pair(y, elabel[k])
        out[k, 2] = _pair(a_label, b_label)
        out[k, 3] = u[k]
        out[k, 4] = v[k]
        out[k, 5] = np.int64(ts[k] * 1e9) if ts[k] > 0 else now_ns


@njit(cache=True, nogil=True, parallel=True)
def encode_updates_parallel(out, op, ia, ib, elabel, u, v, u_label, v_label, vlab, known, ts,  # type: ignore[no-untyped-def]
                            now_ns):  # fmt: skip
    """:func:`encode_updates` spread over numba's threads (GpuEngine's ``host_threads``):
    4,096 records took 18.1 us on one thread of the H200 host, 13.1 us on 16
    (bench/results/gpu/session31/README.md)."""
    for k in prange(op.shape[0]):  # the body of encode_updates
        x, y = ia[k], ib[k]
        a_label = u_label[k] if u_label[k] >= 0 else (vlab[x] if x >= known else -1)
        b_label = v_label[k] if v_label[k] >= 0 else (vlab[y] if y >= known else -1)
        out[k, 0] = _pair(1 if op[k] > 0 else 2, x)  # REC_INSERT, REC_DELETE
        out[k, 1] = _pair(y, elabel[k])
        out[k, 2] = _pair(a_label, b_label)
        out[k, 3] = u[k]
        out[k, 4] = v[k]
        out[k, 5] = np.int64(ts[k] * 1e9) if ts[k] > 0 else now_ns


@njit(cache=True, nogil=True)
def drain_done(tau, outcome, nonzero, t_taken, t_start, t_finish, counts, first, limit, live,  # type: ignore[no-untyped-def]
               live_count, tau0, nsent, clock_off_ns, out_outcome, out_taken, out_started,
               out_finished):  # fmt: skip
    """Read the completion records of updates first, first + 1, ... up to ``limit`` or the
    first one not complete. ``tau`` .. ``t_finish``: the fields of the Done ring (views);
    ``counts``: its (QMAX, MAXU) counts, valid where ``nonzero`` has the query slot's
    bit; ``live``: the query slots to read, ``live_count[c]``: slot live[c] counts (else it
    ships match records).

    Updates first + j with tau0 <= first + j < tau0 + nsent belong to the caller: their
    outcome and times (epoch seconds, by ``clock_off_ns``) go to index first + j - tau0 of
    ``out_*``, and their non-zero counts of counting slots to the rows returned. Returns (m
    records read, the match records the embedding slots of all m will ship, then the count
    rows: index, column in ``live``, count)."""
    maxu = tau.shape[0]
    s0 = first % maxu  # slots advance by one and wrap: no division an update
    m = 0  # first every stamp, then the records behind them (the device writes tau last)
    s = s0
    while first + m < limit and tau[s] == first + m:
        m += 1
        s = s + 1 if s + 1 < maxu else 0
    ncount = 0
    for c in range(live.shape[0]):
        ncount += live_count[c]
    row_i = np.empty(m * ncount, np.int64)
    row_col = np.empty(m * ncount, np.int64)
    row_n = np.empty(m * ncount, np.int64)
    k = 0
    expect = 0
    s = s0 - 1
    for j in range(m):
        s = s + 1 if s + 1 < maxu else 0
        i = first + j - tau0
        mine = 0 <= i < nsent
        if mine:
            out_outcome[i] = outcome[s]
            out_taken[i] = (np.int64(t_taken[s]) + clock_off_ns) / 1e9
            out_started[i] = (np.int64(t_start[s]) + clock_off_ns) / 1e9
            out_finished[i] = (np.int64(t_finish[s]) + clock_off_ns) / 1e9
        nz = nonzero[s]
        if nz == 0:
            continue
        for c in range(live.shape[0]):
            if (nz >> live[c]) & 1 == 0:  # zero: the device did not write it
                continue
            v = np.int64(counts[live[c], s])
            if not live_count[c]:
                expect += v
            elif mine:
                row_i[k] = i
                row_col[k] = c
                row_n[k] = v
                k += 1
    return m, expect, row_i[:k], row_col[:k], row_n[:k]


@njit(cache=True)
def _count(upd, slot, rank, nrank, count):  # type: ignore[no-untyped-def]
    for r in range(upd.shape[0]):
        count[upd[r] * nrank + rank[slot[r]] + 1] += 1


@njit(parallel=True, cache=True)
def _place(upd, slot, match, rank, nrank, start, bounds, sent, op, seq, slot_qid, ext, q, sign, s,  # type: ignore[no-untyped-def]
           m):  # fmt: skip
    # Thread t owns buckets [bounds[t], bounds[t+1]): it alone moves their cursors in start,
    # and it takes its rows in arrival order, so the order within a bucket is kept.
    for t in prange(bounds.shape[0] - 1):
        lo, hi = bounds[t], bounds[t + 1]
        for r in range(upd.shape[0]):
            b = upd[r] * nrank + rank[slot[r]]
            if b < lo or b >= hi:
                continue
            at = start[b]
            start[b] = at + 1
            i = sent[upd[r]]
            q[at] = slot_qid[slot[r]]
            sign[at] = op[i]
            s[at] = seq[i]
            for x in range(m.shape[1]):
                v = match[r, x]
                m[at, x] = ext[v] if v >= 0 else -1


class MatchRows:
    """Decoded match rows of one ``apply`` call, in arrival order, in chunks of
    ``chunk_rows``."""

    def __init__(self, width: int, chunk_rows: int = 1 << 20) -> None:
        self.width = width
        self.chunk_rows = chunk_rows
        self.chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.fill = 0  # rows in the last chunk
        self.n = 0

    def read(
        self, ring: np.ndarray, head: int, nverts: np.ndarray, tau0: int, rows: int
    ) -> tuple[int, int]:
        """Decode up to ``rows`` records; returns (new head, records decoded)."""
        got = 0
        while got < rows:
            if not self.chunks or self.fill == self.chunk_rows:
                c = self.chunk_rows
                upd, slot = np.empty(c, np.int32), np.empty(c, np.int32)
                self.chunks.append((upd, slot, np.empty((c, self.width), np.int32)))
                self.fill = 0
            upd, slot, match = self.chunks[-1]
            end = min(self.chunk_rows, self.fill + rows - got)
            head, k = read_records(ring, head, nverts, tau0, upd[:end], slot[:end],
                                   match[:end], self.fill)  # fmt: skip
            got += k - self.fill
            self.fill = k
            if k < end:
                break
        self.n += got
        return head, got

    def clear(self) -> None:
        """Forget every row, keeping the first chunk for reuse."""
        del self.chunks[1:]
        self.fill = self.n = 0

    def ordered(
        self, sent: np.ndarray, op: np.ndarray, seq: np.ndarray, slot_qid: np.ndarray,
        ext: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
        """(query, sign, seq, match) of every row, ordered by update, then query id (stable),
        the match in external ids (``ext``, by internal id; -1 past the query's size). Row r
        belongs to update ``sent[upd[r]]`` of the batch whose ``op`` and ``seq`` are given,
        and to the query ``slot_qid[slot[r]]``."""
        live = np.nonzero(slot_qid >= 0)[0]
        rank = np.zeros(len(slot_qid), np.int64)
        rank[live[np.argsort(slot_qid[live], kind="stable")]] = np.arange(len(live))
        nrank = max(1, len(live))
        start = np.zeros(len(sent) * nrank + 1, np.int64)
        parts = list(self._filled())
        for u, s, _ in parts:
            _count(u, s, rank, nrank, start)
        start = np.cumsum(start)
        # Buckets split among threads so that each places about as many rows.
        threads = numba.get_num_threads()
        cuts = np.searchsorted(start, np.arange(1, threads) * self.n / threads, side="right") - 1
        bounds = np.concatenate([[0], cuts, [len(start) - 1]]).astype(np.int64)
        q = np.empty(self.n, np.int32)
        sign = np.empty(self.n, np.int8)
        sq = np.empty(self.n, np.int64)
        m = np.empty((self.n, self.width), np.int64)
        for u, s, mm in parts:
            _place(u, s, mm, rank, nrank, start, bounds, sent, op, seq, slot_qid, ext, q, sign, sq,
                   m)  # fmt: skip
        return q, sign, sq, m

    def _filled(self):  # type: ignore[no-untyped-def]
        """(upd, slot, match) views of the rows written, chunk by chunk."""
        for i, (u, s, m) in enumerate(self.chunks):
            n = self.fill if i == len(self.chunks) - 1 else self.chunk_rows
            yield u[:n], s[:n], m[:n]


def warm_up() -> None:
    """Compile (or load from numba's cache) the decoders of embeddings mode now: without
    this, the first embeddings-mode update of a process waits ~1 s for ``_count`` and the
    parallel ``_place`` (oracle-github Q_0: 1.18 s against 0.012 s warm). The arguments
    have the dtypes and layouts :class:`GpuEngine` passes."""
    ring = np.zeros(8, np.int32)
    ring[:5] = [1, 5, 0, 0, 1]  # one record at head 0: stamp, tau 5, slot 0, vertices 0, 1
    rows = MatchRows(2, chunk_rows=4)
    head, got = rows.read(ring, 0, np.array([2], np.int32), 5, 4)
    assert (head, got) == (5, 1), (head, got)
    sent, op, seq = np.zeros(1, np.int64), np.ones(1, np.int8), np.zeros(1, np.int64)
    ext = np.array([10, 11], np.int64)
    q, _sign, _seq, match = rows.ordered(sent, op, seq, np.zeros(1, np.int32), ext)
    assert q.tolist() == [0] and match.tolist() == [[10, 11]], (q, match)
