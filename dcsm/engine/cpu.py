"""The CPU engine: exact, sequential, numba-compiled; the oracle for the GPU engine.

Updates are applied strictly one at a time in seq order, so every update sees exactly the
graph its semantics ask for (after itself for an insertion, before itself for a deletion)
and batch boundaries cannot change any result. The kernels live in
:mod:`dcsm.engine.cpu_kernels`; this module owns their arrays, grows them, and turns the raw
output buffers into :class:`~dcsm.engine.interface.BatchResult` arrays.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import EngineError
from ..model import Graph, Pattern, UpdateBatch
from . import cpu_kernels as kern
from .bulk import intern_graph
from .idtable import IdTable
from .interface import BatchResult, Counts, Deltas, Engine
from .intern import admit, external_matches, grown
from .snapshot import StaticSnapshot


class CpuEngine(Engine):
    """Sequential exact engine.

    Args:
        chunk: updates per kernel call; ``started``/``finished`` timestamps are per chunk.
    """

    backend = "cpu"
    writes_images = True

    def __init__(self, chunk: int = 256) -> None:
        super().__init__()
        if chunk < 1:
            raise ValueError(f"chunk must be >= 1, got {chunk}")
        self._chunk = chunk
        self._ids = IdTable()  # external id -> internal id
        self._ext = np.zeros(1024, np.int64)
        self._vlab = np.zeros(1024, np.int32)
        self._off = np.zeros(1024, np.int64)
        self._deg = np.zeros(1024, np.int32)
        self._cap = np.zeros(1024, np.int32)
        self._shared = np.zeros(1024, np.uint8)  # lists a snapshot reads (cpu_kernels)
        self._nbr = np.zeros(1 << 16, np.int32)
        self._elab = np.zeros(1 << 16, np.int32)
        self._meta = np.zeros(2, np.int64)  # [vertices, pool tail]
        self._cand = np.zeros((kern.K, 64), np.int32)
        self._table_version = -1
        self._table: tuple = ()
        self._started = False

    # -- graph ---------------------------------------------------------------------------

    @property
    def num_vertices(self) -> int:
        return int(self._meta[0])

    @property
    def num_edges(self) -> int:
        return int(self._deg[: self.num_vertices].sum()) // 2

    def load_graph(self, graph: Graph) -> None:
        if self._started or self.num_vertices:
            raise EngineError("load_graph must come before any other graph change")
        g = intern_graph(graph)
        nv = g.num_vertices
        off, deg, cap, nbr, elab, tail = kern.bulk_load(g)
        self._ensure_vertices(nv)
        self._ext[:nv] = g.ext
        self._vlab[:nv] = g.vlab
        self._off[:nv], self._deg[:nv], self._cap[:nv] = off, deg, cap
        self._nbr, self._elab = nbr, elab
        self._meta[:] = (nv, tail)
        self._ids = g.ids

    def export_graph(self) -> Graph:
        nv = self.num_vertices
        src, dst, lab = kern.export_edges(self._off, self._deg, self._nbr, self._elab, nv)
        return Graph(
            vertex_ids=self._ext[:nv].copy(),
            vertex_labels=self._vlab[:nv].copy(),
            src=self._ext[src],
            dst=self._ext[dst],
            edge_labels=lab,
        )

    def _graph(self) -> tuple[np.ndarray, ...]:
        """The graph arrays as the kernels take them (re-taken after any regrowth)."""
        return kern.graph_arrays(self._off, self._deg, self._nbr, self._elab, self._vlab, self._ext)

    def _ensure_vertices(self, n: int) -> None:
        for name in ("_ext", "_vlab", "_off", "_deg", "_cap", "_shared"):
            setattr(self, name, grown(getattr(self, name), n))
        self._ids.ensure(n)

    def _make_room(self) -> None:
        """Repack the pool with at least as much free space as live data."""
        nv = self.num_vertices
        live = int(self._deg[:nv].sum())
        extra = max(1 << 16, 2 * live)
        self._nbr, self._elab, tail = kern.compact(
            self._off, self._deg, self._cap, self._nbr, self._elab, nv, extra
        )
        self._meta[1] = tail
        self._shared[:] = 0  # a new pool: snapshots keep reading the old one

    def _scratch(self, extra_degree: int) -> np.ndarray:
        """Candidate buffer wide enough for the largest neighbour list plus growth."""
        need = int(self._deg[: self.num_vertices].max(initial=0)) + extra_degree + 1
        if self._cand.shape[1] < need:
            self._cand = np.zeros((kern.K, max(need, 2 * self._cand.shape[1])), np.int32)
        return self._cand

    # -- matching ------------------------------------------------------------------------

    def _plan_table(self) -> tuple:
        """(plans, qids, from, until, count_only, caps) in slot order, rebuilt on change."""
        if self._table_version != self.queries.version:
            self._table = (*self.queries.table(), self.queries.caps())
            self._table_version = self.queries.version
        return self._table

    def apply(self, batch: UpdateBatch) -> BatchResult:
        self._check_batch(batch)
        self._started = True
        n = len(batch)
        plans, qids, qfrom, quntil, qcount, qcap = self._plan_table()
        nq = len(qids)
        width = int(plans.nverts.max(initial=0))
        outcome = np.zeros(n, np.int8)
        a_int = np.zeros(n, np.int32)
        b_int = np.zeros(n, np.int32)
        started = np.zeros(n, np.float64)
        finished = np.zeros(n, np.float64)
        out_m = np.empty((256, max(width, 1)), np.int32)
        out_tag = np.empty(256, np.int64)
        cnt_tag = np.empty(n * nq, np.int64)
        cnt_val = np.empty(n * nq, np.int64)
        nout = ncnt = 0
        for c0 in range(0, n, self._chunk):
            c1 = min(n, c0 + self._chunk)
            self._ensure_vertices(self.num_vertices + 2 * (c1 - c0))
            cand = self._scratch(c1 - c0)
            t0 = time.time()
            admit(batch.op[c0:c1], batch.u[c0:c1], batch.v[c0:c1], batch.u_label[c0:c1],
                  batch.v_label[c0:c1], self._ids.slots, self._ext, self._vlab, self._meta,
                  outcome[c0:c1], a_int[c0:c1], b_int[c0:c1])  # fmt: skip
            i = c0
            while True:
                i, out_m, out_tag, nout, ncnt = kern.apply_updates(
                    i, batch.op[:c1], a_int, b_int, batch.label, batch.seq, self._graph(),
                    self._cap, self._meta, self._shared, kern.plan_arrays(plans), plans.first,
                    plans.nverts,
                    qfrom, quntil, qcount, qcap, cand, outcome, out_m, out_tag, nout, cnt_tag,
                    cnt_val, ncnt,
                )  # fmt: skip
                if i >= c1:
                    break
                self._make_room()
            started[c0:c1] = t0
            finished[c0:c1] = time.time()
        if n:
            self.queries.advance(int(batch.seq[-1]))
        # cnt_tag/cnt_val hold count-mode counts and, for capped embedding-mode queries,
        # the matches left out; a slot is one or the other.
        tag, val = cnt_tag[:ncnt], cnt_val[:ncnt]
        is_count = qcount[tag % max(nq, 1)]
        return BatchResult(
            outcome=outcome,
            deltas=self._decode_deltas(batch, out_m, out_tag, nout, qids, plans.nverts, width),
            counts=self._decode_counts(batch, tag[is_count], val[is_count], qids),
            started=started,
            finished=finished,
            overflow=self._decode_counts(batch, tag[~is_count], val[~is_count], qids),
        )

    def _decode_deltas(
        self, batch: UpdateBatch, out_m: np.ndarray, out_tag: np.ndarray, nout: int,
        qids: np.ndarray, nverts: np.ndarray, width: int,
    ) -> Deltas:  # fmt: skip
        if nout == 0:
            return Deltas.empty(width)
        nq = len(qids)
        tag = out_tag[:nout]
        upd, slot = tag // nq, tag % nq
        match = external_matches(self._ext, out_m[:nout], nverts[slot], width)
        return Deltas(
            query=qids[slot], sign=batch.op[upd].astype(np.int8), seq=batch.seq[upd], match=match
        )

    @staticmethod
    def _decode_counts(
        batch: UpdateBatch, tag: np.ndarray, val: np.ndarray, qids: np.ndarray
    ) -> Counts:
        if len(tag) == 0:
            return Counts.empty()
        upd, slot = tag // len(qids), tag % len(qids)
        return Counts(
            query=qids[slot], seq=batch.seq[upd], sign=batch.op[upd].astype(np.int8),
            count=val.copy(),
        )  # fmt: skip

    def _view(self) -> StaticSnapshot:
        nv, tail = self.num_vertices, int(self._meta[1])
        parts = (self._off[:nv], self._deg[:nv], self._nbr[:tail], self._elab[:tail],
                 self._vlab[:nv], self._ext[:nv])  # fmt: skip
        return StaticSnapshot(parts, nv)

    def static_snapshot(self) -> StaticSnapshot:
        """The graph as it stands, for matching on other threads while this engine goes on
        applying updates. Only ``off`` and ``deg`` are copied (12 bytes a vertex); the
        snapshot reads the pool in place, and every list in it is marked shared, so the
        kernels move a list to the pool tail before its first change (copy on write,
        :mod:`.cpu_kernels`). A vertex's label and external id never change, and vertices
        added later lie past the snapshot's. Copying the pool instead stopped the stream
        for about 0.4 s at 43M edges (bench/results/backfill/cycle-model-1128/)."""
        nv, tail = self.num_vertices, int(self._meta[1])
        self._shared[:nv] = 1
        parts = (self._off[:nv].copy(), self._deg[:nv].copy(), self._nbr[:tail],
                 self._elab[:tail], self._vlab[:nv], self._ext[:nv])  # fmt: skip
        return StaticSnapshot(parts, nv)

    def _static(self, pattern: Pattern, emit: bool) -> tuple[int, np.ndarray]:
        return self._view().run_all(pattern, emit)

    def count_static(self, pattern: Pattern) -> int:
        return self._static(pattern, emit=False)[0]

    def match_static(self, pattern: Pattern) -> np.ndarray:
        return self._static(pattern, emit=True)[1]
