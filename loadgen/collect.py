"""What the load generator reads back: the probe's output frames (from ``dcsm.matches`` and a
websocket) turned into per-update latencies, and samples of the service's metrics.

Frames come in both of the service's encodings (see :mod:`dcsm.service.frames`):

* ``batch``: one ``{"type": "counts" | "deltas", "seq": [..], "arrival_ts": [..],
  "emitted_ts": t, ...}`` frame per engine batch: its columns go into numpy arrays as they are,
  with no Python work per update;
* ``json``: one ``{"type": "count", "seq": s, "arrival_ts": a, "emitted_ts": t, ...}`` frame
  (or a type-less delta frame) per row.

Every row's ``arrival_ts`` is its update's own ``ts``, which the load generator set to the
update's scheduled send time, so ``receive time - arrival_ts`` is the end-to-end latency, and
``emitted_ts - arrival_ts`` the part before the frame left the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson


@dataclass(frozen=True)
class Latencies:
    """Per-update results of one step: ``seq`` int64 (k,), sorted and unique; ``e2e`` and
    ``service`` float64 (k,) seconds."""

    seq: np.ndarray
    e2e: np.ndarray
    service: np.ndarray


class FrameLatencies:
    """Collects the rows of one query's frames, each with the time its frame was received.

    ``add(frame_bytes, received_at)`` takes a raw frame (Kafka value or websocket text);
    ``latencies(first_seq, n)`` returns the rows of seqs ``first_seq .. first_seq + n - 1``,
    one per seq (the first received, should a frame ever come twice)."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.gaps = 0  # rows a websocket reported dropped
        self._seq: list[np.ndarray] = []
        self._arrival: list[np.ndarray] = []
        self._recv: list[float] = []
        self._emitted: list[float] = []
        self._rows: list[int] = []
        # json encoding: one row per frame, kept as Python scalars until the end
        self._one: list[tuple[int, float, float, float]] = []

    def add(self, value: bytes | str, received_at: float) -> None:
        frame: dict[str, Any] = orjson.loads(value)
        kind = frame.get("type")
        if kind in ("counts", "deltas"):
            if frame.get("query") != self.query or frame.get("backfill"):
                return
            seq = np.asarray(frame["seq"], np.int64)
            self._seq.append(seq)
            self._arrival.append(np.asarray(frame["arrival_ts"], np.float64))
            self._recv.append(received_at)
            self._emitted.append(float(frame["emitted_ts"]))
            self._rows.append(len(seq))
        elif kind in ("count", None):
            if frame.get("query") != self.query or frame.get("backfill"):
                return
            self._one.append((frame["seq"], frame["arrival_ts"], received_at, frame["emitted_ts"]))
        elif kind == "gap":
            self.gaps += int(frame.get("dropped", 0))

    def add_batch(self, item: Any) -> None:
        """A :meth:`dcsm.client.Subscription.batches` item: a ``CountBatch`` or
        ``DeltaBatch`` (its columns as they are, stamped with its ``received_at``) or a
        ``Gap``."""
        from dcsm.client import CountBatch, DeltaBatch, Gap

        if isinstance(item, CountBatch | DeltaBatch):
            if item.query != self.query or item.backfill:
                return
            self._seq.append(item.seq)
            self._arrival.append(item.arrival_ts)
            self._recv.append(item.received_at)
            self._emitted.append(item.emitted_ts)
            self._rows.append(len(item.seq))
        elif isinstance(item, Gap):
            self.gaps += item.dropped

    def add_many(self, values: list[bytes], received_at: float) -> None:
        for v in values:
            self.add(v, received_at)

    def latencies(self, first_seq: int, n: int) -> Latencies:
        rows = np.asarray(self._rows, np.int64)
        seq = [*self._seq]
        arrival = [*self._arrival]
        recv = [np.repeat(np.asarray(self._recv), rows)]
        emitted = [np.repeat(np.asarray(self._emitted), rows)]
        if self._one:
            one = np.asarray(self._one, np.float64)
            seq.append(one[:, 0].astype(np.int64))
            arrival.append(one[:, 1])
            recv.append(one[:, 2])
            emitted.append(one[:, 3])
        s = np.concatenate(seq) if seq else np.zeros(0, np.int64)
        a = np.concatenate(arrival) if arrival else np.zeros(0)
        r, e = np.concatenate(recv), np.concatenate(emitted)
        keep = (s >= first_seq) & (s < first_seq + n)
        s, a, r, e = s[keep], a[keep], r[keep], e[keep]
        # One row per seq, the first received (a count-mode query has one row per update and
        # sign; a frame sent again would repeat it): np.unique's index is the first occurrence.
        order = np.argsort(r, kind="stable")
        s, a, r, e = s[order], a[order], r[order], e[order]
        s, first = np.unique(s, return_index=True)
        return Latencies(s, r[first] - a[first], e[first] - a[first])


def metric_samples(text: str, name: str) -> list[float]:
    """Values of every sample called ``name`` (any labels) in a Prometheus text exposition."""
    out = []
    for line in text.splitlines():
        if line.startswith(name) and line[len(name) : len(name) + 1] in ("{", " "):
            try:
                out.append(float(line.rsplit(" ", 1)[1]))
            except (IndexError, ValueError):
                continue
    return out
