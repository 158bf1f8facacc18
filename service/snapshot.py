"""Snapshots: the graph, the registered queries, the next seq and the input offsets they
cover, in one ``.npz`` file written atomically (temp file + rename).

Layout: arrays ``vertex_ids`` int64 (nv,), ``vertex_labels`` int32 (nv,), ``src``/``dst``
int64 (ne,), ``edge_labels`` int32 (ne,) (a :class:`~dcsm.model.Graph`), and ``meta``, a
uint8 array of UTF-8 JSON::

    {"format": 1, "next_seq": 1234, "offsets": {"dcsm.updates": {"0": 1200}},
     "queries": [QueryState.persist() rows], "written_at": 1732280000.0}
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.model import Graph

from .errors import ConfigError

FORMAT = 1
_GRAPH_FIELDS = ("vertex_ids", "vertex_labels", "src", "dst", "edge_labels")


@dataclass
class Snapshot:
    graph: Graph
    next_seq: int
    queries: list[dict[str, Any]] = field(default_factory=list)
    offsets: dict[str, dict[int, int]] = field(default_factory=dict)  # topic -> partition -> next

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "next_seq": self.next_seq,
            "offsets": {
                t: {str(p): o for p, o in parts.items()} for t, parts in self.offsets.items()
            },
            "queries": self.queries,
            "written_at": time.time(),
        }
        arrays = {f: getattr(self.graph, f) for f in _GRAPH_FIELDS}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    @staticmethod
    def load(path: Path) -> Snapshot | None:
        """The snapshot at ``path``, None if there is none; ConfigError if unreadable."""
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                graph = Graph(*(z[f] for f in _GRAPH_FIELDS))
                meta = json.loads(z["meta"].tobytes().decode())
        except Exception as exc:
            raise ConfigError(f"snapshot {path} is unreadable: {exc}") from None
        if meta.get("format") != FORMAT:
            raise ConfigError(f"snapshot {path} has format {meta.get('format')}; expected {FORMAT}")
        offsets = {
            t: {int(p): int(o) for p, o in parts.items()} for t, parts in meta["offsets"].items()
        }
        return Snapshot(graph, int(meta["next_seq"]), meta["queries"], offsets)
