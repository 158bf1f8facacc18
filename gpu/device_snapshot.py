"""A frozen copy of the graph on the device that a backfill matches on beside the
persistent kernel (``dcsm.service.backfill``; ``backfill_mode=beside`` on the GPU engine).

:meth:`GpuEngine.static_snapshot <dcsm.gpu.engine.GpuEngine.static_snapshot>` builds the
CSR with the kernel stopped at the registration's ``from_seq`` and hands it here with the
engine's second :class:`~dcsm.gpu.static_match.StaticMatcher` (its own CUDA stream). The
kernel, launched with one block slot an SM to spare, then goes on applying updates while
this snapshot's slices run on the spare slots: the CSR is a copy, so the backfill sees the
graph at ``from_seq`` whatever the stream does meanwhile. Every match is found from one
start edge, so slices are ranges of start edges, and their counts and rows add up to the
whole graph's. One slice runs at a time per matcher (they share its stream): the lock.
"""

from __future__ import annotations

import threading

import numpy as np

from dcsm.model import Pattern

from .static_match import DeviceCsr, StaticMatcher


class DeviceSnapshot:
    """The graph's device CSR, matched in slices of start edges (a ``MatchSnapshot``).

    Args:
        matcher: the static matcher slices run on (not the engine thread's own).
        lock: held while a slice runs; shared by every snapshot of ``matcher``.
        csr: the snapshot, owned from now on.
        ext: external id of each internal vertex id (rows are written in external ids).
    """

    def __init__(
        self, matcher: StaticMatcher, lock: threading.Lock, csr: DeviceCsr, ext: np.ndarray
    ) -> None:
        self._matcher, self._lock, self._csr, self._ext = matcher, lock, csr, ext
        with lock:
            self.start_edges = matcher.start_edges(csr)

    def slices(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """At most ``k`` ranges of about as many start edges each; the work before each cut
        is counted in start edges."""
        cuts = np.unique(np.linspace(0, self.start_edges, max(1, k) + 1).astype(np.int64))
        return cuts, cuts.copy()

    def run(
        self, pattern: Pattern, lo: int, hi: int, emit: bool, limit: int | None = None
    ) -> tuple[int, np.ndarray]:
        """The matches found from start edges ``[lo, hi)``: (count, int64 (k, n) external ids
        if ``emit``, at most ``limit`` rows, else an empty array)."""
        n = pattern.num_vertices
        with self._lock:
            count = self._matcher.count(self._csr, pattern, (lo, hi))
            if not emit or limit == 0:
                return count, np.empty((0, n), np.int64)
            parts, kept = [], 0
            for rows in self._matcher.enumerate(self._csr, pattern, starts=(lo, hi)):
                parts.append(rows)
                kept += len(rows)
                if limit is not None and kept >= limit:
                    break  # the count above stays exact
        found = np.concatenate(parts) if parts else np.empty((0, n), np.int32)
        return count, self._ext[found[:limit]]
