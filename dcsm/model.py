"""Core value types shared by readers, engines and the service.

These are plain frozen dataclasses over numpy arrays (no pydantic: that lives at the edges,
in :mod:`dcsm.schemas`). Conventions used everywhere:

* Labels are non-negative ``int32``; :data:`ANY_LABEL` (-1) in a *pattern* is a wildcard.
* Data vertex ids are any integers in ``[0, 2**63)`` (``int64``); engines map them to dense
  internal ids themselves.
* Edge update ops are :data:`OP_INSERT` (+1) and :data:`OP_DELETE` (-1), so an op doubles as
  the sign of the deltas it produces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import PatternError

ANY_LABEL = -1
MAX_PATTERN_VERTICES = 16
MAX_LABEL = 2**31 - 1
MAX_VERTEX_ID = 2**63 - 1
OP_INSERT = 1
OP_DELETE = -1

# Per-update outcome codes reported by every engine (BatchResult.outcome).
OUTCOME_APPLIED = 0  # the graph changed
OUTCOME_NOOP = 1  # insert of an existing edge / delete of a missing one: nothing changes
OUTCOME_SELF_LOOP = 2  # rejected: u == v
OUTCOME_LABEL_CONFLICT = 3  # rejected: a vertex label differs from the one first seen
OUTCOME_NAMES = {
    OUTCOME_APPLIED: "applied",
    OUTCOME_NOOP: "noop",
    OUTCOME_SELF_LOOP: "self_loop",
    OUTCOME_LABEL_CONFLICT: "label_conflict",
}


@dataclass(frozen=True)
class Pattern:
    """A validated query pattern.

    Attributes:
        name: query name.
        vlabels: int32, shape (n,); label of query vertex i, ANY_LABEL for a wildcard.
        edges: int32, shape (m, 2); undirected edges, u < v, in the order given.
        elabels: int32, shape (m,); edge label, ANY_LABEL for a wildcard.
        distinct: report each matching subgraph once instead of every embedding.
    """

    name: str
    vlabels: np.ndarray
    edges: np.ndarray
    elabels: np.ndarray
    distinct: bool = False

    @property
    def num_vertices(self) -> int:
        return int(self.vlabels.shape[0])

    @property
    def num_edges(self) -> int:
        return int(self.edges.shape[0])

    @property
    def shape_key(self) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]:
        """The edges and labels as nested tuples: equal for patterns that match alike (name
        and ``distinct`` aside), hashable, for caches of what is derived from them."""
        return (
            tuple(map(tuple, self.edges.tolist())), tuple(self.vlabels.tolist()),
            tuple(self.elabels.tolist()),
        )  # fmt: skip

    @staticmethod
    def build(
        name: str,
        vlabels: list[int | None],
        edges: list[tuple[int, int, int | None]],
        distinct: bool = False,
    ) -> Pattern:
        """Validate and build a pattern; raises PatternError naming the field and reason.

        ``vlabels[i]`` is the label of vertex i (None = any); ``edges`` are (u, v, label|None).
        """
        n = len(vlabels)
        if n == 0:
            raise PatternError("vertices", "a pattern needs at least one edge and two vertices")
        if n > MAX_PATTERN_VERTICES:
            raise PatternError(
                "vertices", f"{n} vertices; at most {MAX_PATTERN_VERTICES} are supported"
            )
        for i, lab in enumerate(vlabels):
            if lab is not None and not 0 <= lab <= MAX_LABEL:
                raise PatternError(f"vertices[{i}].label", f"label {lab} is outside [0, 2^31)")
        if not edges:
            raise PatternError("edges", "a pattern needs at least one edge")
        seen: dict[tuple[int, int], int] = {}
        for k, (u, v, lab) in enumerate(edges):
            for end, x in (("u", u), ("v", v)):
                if not 0 <= x < n:
                    raise PatternError(
                        f"edges[{k}].{end}", f"vertex {x} is not declared (ids are 0..{n - 1})"
                    )
            if u == v:
                raise PatternError(f"edges[{k}]", f"self loop on vertex {u}")
            key = (min(u, v), max(u, v))
            if key in seen:
                raise PatternError(
                    f"edges[{k}]", f"duplicate of edges[{seen[key]}] ({key[0]}-{key[1]})"
                )
            seen[key] = k
            if lab is not None and not 0 <= lab <= MAX_LABEL:
                raise PatternError(f"edges[{k}].label", f"label {lab} is outside [0, 2^31)")
        # Connectivity: a disconnected pattern has no incremental plan from every edge.
        adj: list[list[int]] = [[] for _ in range(n)]
        for u, v, _ in edges:
            adj[u].append(v)
            adj[v].append(u)
        reached = {0}
        stack = [0]
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if y not in reached:
                    reached.add(y)
                    stack.append(y)
        if len(reached) != n:
            missing = sorted(set(range(n)) - reached)
            raise PatternError(
                "edges", f"the pattern is disconnected: vertices {missing} are not reachable from 0"
            )
        e = np.array([sorted((u, v)) for u, v, _ in edges], dtype=np.int32).reshape(-1, 2)
        el = np.array([ANY_LABEL if x is None else x for _, _, x in edges], dtype=np.int32)
        vl = np.array([ANY_LABEL if x is None else x for x in vlabels], dtype=np.int32)
        return Pattern(name=name, vlabels=vl, edges=e, elabels=el, distinct=distinct)

    def to_networkx(self):  # type: ignore[no-untyped-def]
        """The pattern as a networkx Graph with ``label`` attributes (None = any)."""
        import networkx as nx

        g = nx.Graph()
        for i, lab in enumerate(self.vlabels.tolist()):
            g.add_node(i, label=None if lab == ANY_LABEL else lab)
        for (u, v), lab in zip(self.edges.tolist(), self.elabels.tolist(), strict=True):
            g.add_edge(u, v, label=None if lab == ANY_LABEL else lab)
        return g


@dataclass(frozen=True)
class Graph:
    """A data graph as flat arrays (what readers return and engines bulk-load).

    Attributes:
        vertex_ids: int64, shape (nv,); external ids of the declared vertices.
        vertex_labels: int32, shape (nv,).
        src, dst: int64, shape (ne,); undirected edges, each pair once.
        edge_labels: int32, shape (ne,).
    """

    vertex_ids: np.ndarray
    vertex_labels: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    edge_labels: np.ndarray

    @property
    def num_vertices(self) -> int:
        return int(self.vertex_ids.shape[0])

    @property
    def num_edges(self) -> int:
        return int(self.src.shape[0])

    @staticmethod
    def empty() -> Graph:
        return Graph(
            np.zeros(0, np.int64),
            np.zeros(0, np.int32),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int32),
        )


@dataclass(frozen=True)
class UpdateBatch:
    """A batch of edge updates in stream order.

    Attributes:
        seq: int64, shape (n,); global sequence numbers, strictly increasing.
        ts: float64, shape (n,); arrival time (seconds since the epoch; 0 if unknown).
        op: int8, shape (n,); OP_INSERT or OP_DELETE.
        u, v: int64, shape (n,); endpoint ids.
        label: int32, shape (n,); edge label.
        u_label, v_label: int32, shape (n,); vertex labels, ANY_LABEL when not given
            (an unseen vertex then gets label 0).
    """

    seq: np.ndarray
    ts: np.ndarray
    op: np.ndarray
    u: np.ndarray
    v: np.ndarray
    label: np.ndarray
    u_label: np.ndarray
    v_label: np.ndarray

    def __len__(self) -> int:
        return int(self.seq.shape[0])

    @staticmethod
    def from_arrays(
        op: np.ndarray,
        u: np.ndarray,
        v: np.ndarray,
        label: np.ndarray | None = None,
        *,
        seq: np.ndarray | None = None,
        first_seq: int = 0,
        ts: np.ndarray | None = None,
        u_label: np.ndarray | None = None,
        v_label: np.ndarray | None = None,
    ) -> UpdateBatch:
        """Build a batch, filling defaults: consecutive seqs from ``first_seq``, ts 0,
        label 0, vertex labels unspecified."""
        n = int(np.asarray(op).shape[0])

        def arr(x: np.ndarray | None, dtype: type, fill: float) -> np.ndarray:
            if x is None:
                return np.full(n, fill, dtype=dtype)
            a: np.ndarray = np.ascontiguousarray(x, dtype=dtype)
            if a.shape != (n,):
                raise ValueError(f"expected shape ({n},), got {a.shape}")
            return a

        if seq is None:
            seq = np.arange(first_seq, first_seq + n, dtype=np.int64)
        return UpdateBatch(
            seq=arr(seq, np.int64, 0),
            ts=arr(ts, np.float64, 0.0),
            op=arr(op, np.int8, 0),
            u=arr(u, np.int64, 0),
            v=arr(v, np.int64, 0),
            label=arr(label, np.int32, 0),
            u_label=arr(u_label, np.int32, ANY_LABEL),
            v_label=arr(v_label, np.int32, ANY_LABEL),
        )

    def slice(self, start: int, stop: int) -> UpdateBatch:
        return UpdateBatch(
            *(getattr(self, f)[start:stop] for f in UpdateBatch.__dataclass_fields__)
        )

    @staticmethod
    def concat(batches: list[UpdateBatch]) -> UpdateBatch:
        if not batches:
            return UpdateBatch.from_arrays(np.zeros(0), np.zeros(0), np.zeros(0))
        return UpdateBatch(
            *(
                np.concatenate([getattr(b, f) for b in batches])
                for f in UpdateBatch.__dataclass_fields__
            )
        )
