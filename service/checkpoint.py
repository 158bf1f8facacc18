"""Checkpoints: the whole state at one seq, in one ``.npz`` file, written atomically.

A checkpoint holds the graph, the registered queries (definition, mode, encoding,
``from_seq``, stats), the next seq, the input offsets it covers (the first record *not* in
it, per source and partition) and how many query-log entries the engine had seen. Restoring
it and replaying the inputs from those offsets (and the query log from that entry) gives
exactly the state and output of an uninterrupted run.

Files in the state directory::

    checkpoint.npz        the newest
    checkpoint.prev.npz   the one before (kept: a corrupt newest falls back to it)

Writing: ``checkpoint.tmp`` is written and fsynced, the newest becomes ``.prev``, the temp
file becomes the newest, the directory is fsynced. A crash at any point leaves at least one
whole checkpoint. Reading checks the zip CRCs of every array (``numpy.load`` does) and the
format, so a torn or corrupt file is detected, never half-used.

Layout: arrays ``vertex_ids`` int64 (nv,), ``vertex_labels`` int32 (nv,), ``src``/``dst``
int64 (ne,), ``edge_labels`` int32 (ne,) (a :class:`~dcsm.model.Graph`), and ``meta``, a uint8
array of UTF-8 JSON::

    {"format": 2, "next_seq": 1234, "positions": {"kafka:dcsm.updates": {"0": 1200}},
     "log_entries": 3, "queries": [QueryState.persist() rows], "written_at": 1732280000.0,
     "placement": {"replicas": 2, "shard": "queries"}}

``placement`` says which replica set the queries' stored owners (``replica`` in each row)
were decided for (:meth:`dcsm.service.replicas.Sharding.restored_owners`). A checkpoint
without it (written before owners were stored) still loads: its queries keep the old
name-hash placement.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.model import Graph

from .errors import ConfigError
from .messages import Positions

log = logging.getLogger("dcsm.service.checkpoint")

FORMAT = 2
NEWEST = "checkpoint.npz"
PREVIOUS = "checkpoint.prev.npz"
_TMP = "checkpoint.tmp"
_GRAPH_FIELDS = ("vertex_ids", "vertex_labels", "src", "dst", "edge_labels")


class CheckpointError(ConfigError):
    """No usable checkpoint where one is needed."""


@dataclass
class Checkpoint:
    graph: Graph
    next_seq: int
    queries: list[dict[str, Any]] = field(default_factory=list)
    positions: Positions = field(default_factory=dict)
    log_entries: int = 0
    written_at: float = 0.0
    path: Path | None = None
    placement: dict[str, Any] | None = None  # None: written before owners were stored

    def save(self, state_dir: Path) -> Path:
        """Write atomically into ``state_dir`` (see the module docstring); the path."""
        state_dir.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "next_seq": self.next_seq,
            "positions": {
                s: {str(p): o for p, o in parts.items()} for s, parts in self.positions.items()
            },
            "log_entries": self.log_entries,
            "queries": self.queries,
            "written_at": time.time(),
        }
        if self.placement is not None:
            meta["placement"] = self.placement
        arrays = {f: getattr(self.graph, f) for f in _GRAPH_FIELDS}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        tmp, newest = state_dir / _TMP, state_dir / NEWEST
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        if newest.exists():
            os.replace(newest, state_dir / PREVIOUS)
        os.replace(tmp, newest)
        _fsync_dir(state_dir)
        self.path = newest
        return newest

    @staticmethod
    def read(path: Path) -> Checkpoint:
        """One checkpoint file; CheckpointError saying why it is unusable."""
        try:
            with np.load(path, allow_pickle=False) as z:
                graph = Graph(*(z[f] for f in _GRAPH_FIELDS))
                meta = json.loads(z["meta"].tobytes().decode())
        except Exception as exc:
            raise CheckpointError(f"{path} is unreadable ({type(exc).__name__}: {exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            got = meta.get("format") if isinstance(meta, dict) else None
            raise CheckpointError(f"{path} has format {got}; expected {FORMAT}")
        positions = {
            s: {int(p): int(o) for p, o in parts.items()} for s, parts in meta["positions"].items()
        }
        placement = meta.get("placement")
        return Checkpoint(
            graph, int(meta["next_seq"]), meta["queries"], positions, int(meta["log_entries"]),
            float(meta["written_at"]), path, placement if isinstance(placement, dict) else None,
        )  # fmt: skip

    @staticmethod
    def latest(state_dir: Path) -> Checkpoint | None:
        """The newest usable checkpoint in ``state_dir``, falling back to the previous one
        (with a warning) when the newest is missing or corrupt; None when there is none at
        all; CheckpointError when checkpoint files exist but none is usable."""
        problems = []
        for name in (NEWEST, PREVIOUS):
            path = state_dir / name
            if not path.exists():
                continue
            try:
                ckpt = Checkpoint.read(path)
            except CheckpointError as exc:
                problems.append(str(exc))
                log.warning("checkpoint %s", exc)
                continue
            if problems:
                log.warning("falling back to the previous checkpoint %s", path)
            return ckpt
        if problems:
            raise CheckpointError(
                "no usable checkpoint: " + "; ".join(problems)
                + ". Restore a good checkpoint file, or start with --reset-state"
            )  # fmt: skip
        return None


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def reset_state(state_dir: Path) -> list[str]:
    """Remove checkpoints and logs from ``state_dir`` (``--reset-state``); what was removed."""
    removed = []
    for name in (NEWEST, PREVIOUS, _TMP, "queries.log", "updates.log", "idempotency.log"):
        path = state_dir / name
        if path.exists():
            path.unlink()
            removed.append(name)
    return removed
