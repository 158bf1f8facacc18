"""The persistent kernel's query slots, kept on the host.

A registered query occupies one of ``qmax`` slots (its plans live in the device's plan
table at that slot). The kernel learns of a registration or an unregistration from a
control record in the input ring, placed right before the first update with
``seq >= from_seq``: until that update is sent the record waits here. An unregistered
query's slot is recycled only once every update that could still match it has completed
and its match records have been read (records are decoded by slot).

Arrays (numpy, one entry a slot; the engine's pump and result decoding read them):
``qid`` (-1: free), ``count_only``, ``nverts`` (the pattern's vertices: row width).
"""

from __future__ import annotations

import numpy as np

from dcsm.errors import EngineError

from . import layout as L


class QuerySlots:
    """Slot of each query, control records waiting for their update, slots being freed."""

    def __init__(self, qmax: int) -> None:
        self.qmax = qmax
        self.qid = np.full(qmax, -1, np.int32)
        self.count_only = np.zeros(qmax, np.bool_)
        self.nverts = np.zeros(qmax, np.int32)
        self._of: dict[int, int] = {}  # query id -> slot
        self._free = list(range(qmax))
        # (seq, order, kind, slot, b, label): controls not yet sent, by seq then order
        self._pending: list[tuple[int, int, int, int, int, int]] = []
        self._order = 0
        self._freeing: list[tuple[int, int]] = []  # (first tau after the cut, slot)

    def check_room(self) -> None:
        """Raise when every slot is taken."""
        if not self._free:
            raise EngineError(f"all {self.qmax} GPU query slots are in use")

    def take(self, qid: int, count_only: bool, nverts: int) -> int:
        """A free slot for query ``qid`` (check_room first)."""
        slot = self._free.pop(0)
        self._of[qid] = slot
        self.qid[slot] = qid
        self.count_only[slot] = count_only
        self.nverts[slot] = nverts
        return slot

    def release(self, qid: int) -> int:
        """Query ``qid``'s slot, which it keeps until its UNREGISTER record is sent and
        every update before it has finished (:meth:`free_finished`)."""
        return self._of.pop(qid)

    def live(self) -> np.ndarray:
        """The slots that hold a query (its updates may still be running)."""
        return np.nonzero(self.qid >= 0)[0]

    def width(self) -> int:
        """The widest pattern among the slots that hold a query."""
        return int(self.nverts[self.qid >= 0].max(initial=0))

    def queue_control(self, seq: int, kind: int, slot: int, b: int, label: int) -> None:
        """A REGISTER/UNREGISTER record, to go right before the first update with seq >=
        ``seq`` (controls of one seq keep their order)."""
        self._pending.append((seq, self._order, kind, slot, b, label))
        self._order += 1
        self._pending.sort()

    def due_by(self, seq: int) -> bool:
        """Whether a waiting control record goes before an update of ``seq`` or less (a
        piece of updates up to ``seq`` must then carry it; one dated later, such as the
        unregistration of a query registered for one apply, waits for a later piece)."""
        return bool(self._pending) and self._pending[0][0] <= seq

    def with_controls(self, recs: np.ndarray, seqs: np.ndarray, tau0: int) -> np.ndarray:
        """``recs`` (input records of updates with ``seqs``, taking taus from ``tau0``) with
        the pending control records inserted before the first update they affect."""
        if not self._pending:
            return recs
        out, start = [], 0
        keep = []
        for pending in self._pending:
            seq, _, kind, slot, b, label = pending
            at = int(np.searchsorted(seqs, seq))
            if at >= len(seqs):
                keep.append(pending)
                continue
            out.append(recs[start:at])
            start = at
            out.append(np.array([(kind, slot, b, label, 0, 0, 0, 0, 0)], L.IN_REC))
            if kind == L.REC_UNREGISTER:
                self._freeing.append((tau0 + at, slot))
        out.append(recs[start:])
        self._pending = keep
        return np.concatenate(out)

    def free_finished(self, done: int) -> None:
        """Recycle the slots of unregistered queries whose every update (taus before the
        cut) has completed: ``done`` is the last completed tau, with every match record
        of it read."""
        for tau_cut, slot in [f for f in self._freeing if f[0] - 1 <= done]:
            self._freeing.remove((tau_cut, slot))
            self.qid[slot] = -1
            self._free.append(slot)
