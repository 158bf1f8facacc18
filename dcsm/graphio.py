"""Readers for graph, query and stream files.

Formats:

* **CSM text** (the format of the published CSM systems): ``v <id> <label>`` declares a
  vertex, ``e <u> <v> <label>`` an undirected edge (in a stream file: an insertion) and
  ``-e <u> <v> <label>`` a deletion (stream files only). Blank lines and lines starting with
  ``#`` are ignored. A data graph or stream may omit the edge label (0).
* **Timestamped streams** (our extension, written by ``dcsm gen-stream --rate``): a stream
  line may carry a 5th column, ``e <u> <v> <label> <ts>``, the update's arrival time in
  seconds since the start of the stream (a float). Either every update line of a file has
  one or none does; they must be finite, >= 0 and non-decreasing. Readers that do not know
  the extension see an ordinary CSM stream once the column is cut off.
* **SNAP edge lists**: one ``<u> <v>`` pair per line (tabs or spaces), ``#``/``%`` comments,
  optionally a first line ``<|V|> <|E|>`` as in the DCSM copy of email-Enron (taken as one when
  it counts the lines after it, at least one, and every id after it is below ``|V|``; a file
  of one line is one edge). Both directions and repeated pairs fold into one undirected edge;
  self loops are dropped. All labels are 0.
* **Binary graphs** (ours, for graphs of tens of millions of edges; ``dcsm gen-graph --out
  g.npz`` writes one): an uncompressed NumPy ``.npz`` archive holding ``format`` (the string
  ``dcsm-graph/1``), ``vertex_ids`` int64 (nv,), ``vertex_labels`` int32 (nv,), ``src`` and
  ``dst`` int64 (ne,) and ``edge_labels`` int32 (ne,): every vertex declared once, every
  undirected edge once, no self loop, endpoints among the vertices (checked on reading, with
  array operations only). Any reader of ``.npz`` files (NumPy, or a zip tool plus the ``.npy``
  header) can read it; no per-line parsing.

Every error raises :class:`~dcsm.errors.InputFileError` naming the file and line.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .arrays import unique_sorted
from .errors import InputFileError, PatternError
from .model import (
    ANY_LABEL,
    MAX_LABEL,
    MAX_VERTEX_ID,
    OP_DELETE,
    OP_INSERT,
    Graph,
    Pattern,
    UpdateBatch,
)


def _lines(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of every non-blank, non-comment line."""
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise InputFileError(str(path), None, exc.strerror or str(exc)) from None
    with fh:
        try:
            for lineno, line in enumerate(fh, 1):
                tokens = line.split()
                if tokens and not tokens[0].startswith(("#", "%")):
                    yield lineno, tokens
        except UnicodeDecodeError as exc:
            raise InputFileError(str(path), None, f"not a text file ({exc.reason})") from None


def _int(path: str | Path, lineno: int, token: str, what: str, hi: int) -> int:
    try:
        x = int(token)
    except ValueError:
        raise InputFileError(str(path), lineno, f"{what} {token!r} is not an integer") from None
    if not 0 <= x <= hi:
        raise InputFileError(str(path), lineno, f"{what} {x} is outside [0, {hi}]")
    return x


def _float(path: str | Path, lineno: int, token: str, what: str) -> float:
    try:
        x = float(token)
    except ValueError:
        raise InputFileError(str(path), lineno, f"{what} {token!r} is not a number") from None
    if not (math.isfinite(x) and x >= 0):
        raise InputFileError(str(path), lineno, f"{what} {token!r} is not a finite number >= 0")
    return x


def _expect(path: str | Path, lineno: int, tokens: list[str], counts: tuple[int, ...]) -> None:
    if len(tokens) not in counts:
        lo, hi = min(counts) - 1, max(counts) - 1
        want = str(lo) if lo == hi else f"{lo} to {hi}"
        raise InputFileError(
            str(path), lineno, f"{tokens[0]!r} line needs {want} fields, got {len(tokens) - 1}"
        )


def read_csm_graph(path: str | Path) -> Graph:
    """A data graph in CSM format. Repeated edges fold (the first label wins); an edge to an
    undeclared vertex, a self loop or a repeated vertex is an error."""
    labels: dict[int, int] = {}
    edges: dict[tuple[int, int], int] = {}
    for lineno, tok in _lines(path):
        kind = tok[0]
        if kind == "v":
            _expect(path, lineno, tok, (3,))
            x = _int(path, lineno, tok[1], "vertex id", MAX_VERTEX_ID)
            if x in labels:
                raise InputFileError(str(path), lineno, f"vertex {x} is declared twice")
            labels[x] = _int(path, lineno, tok[2], "label", MAX_LABEL)
        elif kind == "e":
            _expect(path, lineno, tok, (3, 4))
            u = _int(path, lineno, tok[1], "vertex id", MAX_VERTEX_ID)
            v = _int(path, lineno, tok[2], "vertex id", MAX_VERTEX_ID)
            lab = _int(path, lineno, tok[3], "label", MAX_LABEL) if len(tok) == 4 else 0
            for x in (u, v):
                if x not in labels:
                    raise InputFileError(str(path), lineno, f"edge uses undeclared vertex {x}")
            if u == v:
                raise InputFileError(str(path), lineno, f"self loop on vertex {u}")
            edges.setdefault((min(u, v), max(u, v)), lab)
        else:
            raise InputFileError(
                str(path), lineno, f"unknown line type {kind!r} (a graph has 'v' and 'e' lines)"
            )
    pairs = np.array(list(edges.keys()), np.int64).reshape(-1, 2)
    return Graph(
        vertex_ids=np.fromiter(labels.keys(), np.int64, len(labels)),
        vertex_labels=np.fromiter(labels.values(), np.int32, len(labels)),
        src=pairs[:, 0].copy(),
        dst=pairs[:, 1].copy(),
        edge_labels=np.fromiter(edges.values(), np.int32, len(edges)),
    )


def read_csm_query(path: str | Path) -> Pattern:
    """A query pattern in CSM format; its name is the file's stem."""
    vlabels: dict[int, int] = {}
    edges: list[tuple[int, int, int | None]] = []
    for lineno, tok in _lines(path):
        if tok[0] == "v":
            _expect(path, lineno, tok, (3,))
            x = _int(path, lineno, tok[1], "vertex id", 10**6)
            if x in vlabels:
                raise InputFileError(str(path), lineno, f"vertex {x} is declared twice")
            vlabels[x] = _int(path, lineno, tok[2], "label", MAX_LABEL)
        elif tok[0] == "e":
            _expect(path, lineno, tok, (3, 4))
            u = _int(path, lineno, tok[1], "vertex id", 10**6)
            v = _int(path, lineno, tok[2], "vertex id", 10**6)
            lab = _int(path, lineno, tok[3], "label", MAX_LABEL) if len(tok) == 4 else None
            edges.append((u, v, lab))
        else:
            raise InputFileError(
                str(path), lineno, f"unknown line type {tok[0]!r} (a query has 'v' and 'e' lines)"
            )
    n = len(vlabels)
    if sorted(vlabels) != list(range(n)):
        raise InputFileError(str(path), None, "query vertex ids must be 0..n-1")
    try:
        return Pattern.build(Path(path).stem, [vlabels[i] for i in range(n)], edges)
    except PatternError as exc:
        raise InputFileError(str(path), None, f"invalid pattern: {exc}") from None


def read_csm_stream(path: str | Path) -> UpdateBatch:
    """An update stream in CSM format (``e`` inserts, ``-e`` deletes), seqs 0..n-1.

    ``ts`` holds the optional 5th column (seconds since the start of the stream), else 0.
    """
    ops: list[int] = []
    us: list[int] = []
    vs: list[int] = []
    labs: list[int] = []
    tss: list[float] = []
    timed: bool | None = None  # decided by the first update line
    for lineno, tok in _lines(path):
        if tok[0] not in ("e", "-e"):
            raise InputFileError(
                str(path), lineno, f"unknown line type {tok[0]!r} (a stream has 'e' and '-e' lines)"
            )
        _expect(path, lineno, tok, (3, 4, 5))
        has_ts = len(tok) == 5
        if timed is None:
            timed = has_ts
        elif has_ts != timed:
            first = "has a" if timed else "has no"
            raise InputFileError(
                str(path),
                lineno,
                f"the first update {first} timestamp column; either every line has one or none",
            )
        ops.append(OP_INSERT if tok[0] == "e" else OP_DELETE)
        us.append(_int(path, lineno, tok[1], "vertex id", MAX_VERTEX_ID))
        vs.append(_int(path, lineno, tok[2], "vertex id", MAX_VERTEX_ID))
        labs.append(_int(path, lineno, tok[3], "label", MAX_LABEL) if len(tok) >= 4 else 0)
        if has_ts:
            ts = _float(path, lineno, tok[4], "timestamp")
            if tss and ts < tss[-1]:
                raise InputFileError(
                    str(path), lineno, f"timestamp {ts} is before the previous one ({tss[-1]})"
                )
            tss.append(ts)
    return UpdateBatch.from_arrays(
        np.array(ops, np.int8),
        np.array(us, np.int64),
        np.array(vs, np.int64),
        np.array(labs),
        ts=np.array(tss, np.float64) if timed else None,
    )


def read_snap(path: str | Path) -> Graph:
    """A SNAP edge list (see module docstring)."""
    rows: list[tuple[int, int]] = []
    for lineno, tok in _lines(path):
        if len(tok) < 2:
            raise InputFileError(str(path), lineno, f"expected '<u> <v>', got {' '.join(tok)!r}")
        u = _int(path, lineno, tok[0], "vertex id", MAX_VERTEX_ID)
        v = _int(path, lineno, tok[1], "vertex id", MAX_VERTEX_ID)
        rows.append((u, v))
    if not rows:
        return Graph.empty()
    arr = np.array(rows, np.int64)
    # A first line "|V| |E|" is a header when it counts the lines after it (at least one)
    # and every id after it is below |V|: a lone "1 0" is an edge, not an empty graph.
    nv, ne = arr[0]
    if len(arr) > 1 and len(arr) - 1 == ne and arr[1:].max() < nv:
        arr = arr[1:]
    arr = arr[arr[:, 0] != arr[:, 1]]
    pairs = np.unique(np.sort(arr, axis=1), axis=0)
    ids = unique_sorted(pairs)
    return Graph(
        vertex_ids=ids,
        vertex_labels=np.zeros(len(ids), np.int32),
        src=pairs[:, 0].copy(),
        dst=pairs[:, 1].copy(),
        edge_labels=np.zeros(len(pairs), np.int32),
    )


GRAPH_FORMAT = "dcsm-graph/1"
_ZIP_MAGIC = b"PK\x03\x04"


def read_binary_graph(path: str | Path) -> Graph:
    """A data graph in the binary format (module docstring), validated with array checks."""
    name = str(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if "format" not in z.files or str(z["format"]) != GRAPH_FORMAT:
                raise InputFileError(name, None, f"not a {GRAPH_FORMAT} archive")
            cols = {k: z[k] for k in ("vertex_ids", "vertex_labels", "src", "dst", "edge_labels")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise InputFileError(name, None, f"cannot read the binary graph: {exc}") from None
    ids, vlab = cols["vertex_ids"].astype(np.int64), cols["vertex_labels"].astype(np.int32)
    src, dst = cols["src"].astype(np.int64), cols["dst"].astype(np.int64)
    elab = cols["edge_labels"].astype(np.int32)
    if len(ids) != len(vlab) or not len(src) == len(dst) == len(elab):
        raise InputFileError(name, None, "column lengths differ")
    if len(ids) and (ids.min() < 0 or ids.max() > MAX_VERTEX_ID):
        raise InputFileError(name, None, f"vertex ids must be in 0..{MAX_VERTEX_ID}")
    for what, lab in (("vertex", vlab), ("edge", elab)):
        if len(lab) and (lab.min() < 0 or lab.max() > MAX_LABEL):
            raise InputFileError(name, None, f"{what} labels must be in 0..{MAX_LABEL}")
    order = np.sort(ids)
    if len(order) > 1 and np.any(order[1:] == order[:-1]):
        raise InputFileError(name, None, "a vertex is declared twice")
    if np.any(src == dst):
        raise InputFileError(name, None, f"self loop on vertex {int(src[src == dst][0])}")
    dense = []  # each endpoint's rank among the vertex ids
    for end in (src, dst):
        at = np.searchsorted(order, end)
        bad = (at >= len(order)) | (order[np.minimum(at, len(order) - 1)] != end)
        if np.any(bad):
            raise InputFileError(name, None, f"edge uses undeclared vertex {int(end[bad][0])}")
        dense.append(at.astype(np.int64))
    key = np.sort(np.minimum(*dense) * len(order) + np.maximum(*dense))
    if np.any(key[1:] == key[:-1]):
        raise InputFileError(name, None, "an undirected edge is listed twice")
    return Graph(ids, vlab, src, dst, elab)


def write_binary_graph(path: str | Path, graph: Graph) -> None:
    """Write ``graph`` in the binary format (exactly at ``path``: no suffix is added)."""
    with open(path, "wb") as fh:
        np.savez(
            fh, format=np.array(GRAPH_FORMAT), vertex_ids=graph.vertex_ids.astype(np.int64),
            vertex_labels=graph.vertex_labels.astype(np.int32), src=graph.src.astype(np.int64),
            dst=graph.dst.astype(np.int64), edge_labels=graph.edge_labels.astype(np.int32),
        )  # fmt: skip


def write_graph(path: str | Path, graph: Graph) -> None:
    """Binary when ``path`` ends in ``.npz``, else CSM text."""
    (write_binary_graph if str(path).endswith(".npz") else write_csm_graph)(path, graph)


def read_graph(path: str | Path) -> Graph:
    """A data graph in the binary format (told by its zip header), else CSM or SNAP text,
    told apart by the first non-comment token."""
    try:
        with open(path, "rb") as fh:
            binary = fh.read(4) == _ZIP_MAGIC
    except OSError as exc:
        raise InputFileError(str(path), None, exc.strerror or str(exc)) from None
    if binary:
        return read_binary_graph(path)
    for _, tok in _lines(path):
        return read_csm_graph(path) if tok[0] in ("v", "e") else read_snap(path)
    return Graph.empty()


# -- writers -------------------------------------------------------------------------------

_WRITE_ROWS = 1 << 16  # rows formatted per string operation (bounds peak memory)


def _write_rows(fh, template: str, columns: list[list]) -> None:  # type: ignore[no-untyped-def]
    """Write ``template % row`` for every row of the equally long ``columns``, formatting a
    block of rows per call (one C-level ``%`` instead of one per line)."""
    rows = list(zip(*columns, strict=True))
    for k in range(0, len(rows), _WRITE_ROWS):
        block = rows[k : k + _WRITE_ROWS]
        fh.write((template * len(block)) % tuple(x for row in block for x in row))


def write_csm_graph(path: str | Path, graph: Graph) -> None:
    """Write ``graph`` in CSM format: every vertex, then every edge with its label."""
    with open(path, "w", encoding="utf-8") as fh:
        _write_rows(fh, "v %d %d\n", [graph.vertex_ids.tolist(), graph.vertex_labels.tolist()])
        _write_rows(
            fh, "e %d %d %d\n", [graph.src.tolist(), graph.dst.tolist(), graph.edge_labels.tolist()]
        )


def write_csm_query(path: str | Path, pattern: Pattern, *, any_label: int | None = None) -> None:
    """Write ``pattern`` in CSM format (``v id label`` and ``e u v label`` lines). The format
    has no wildcard: a wildcard label is written as ``any_label``, which the caller chooses
    (e.g. the only label a graph has); without it a wildcard is an error."""
    vl, el = pattern.vlabels.tolist(), pattern.elabels.tolist()
    if any_label is None and ANY_LABEL in vl + el:
        raise ValueError(f"pattern {pattern.name!r} has wildcards, which CSM files cannot hold")
    vl = [any_label if x == ANY_LABEL else x for x in vl]
    el = [any_label if x == ANY_LABEL else x for x in el]
    with open(path, "w", encoding="utf-8") as fh:
        _write_rows(fh, "v %d %d\n", [list(range(len(vl))), vl])
        _write_rows(fh, "e %d %d %d\n", [*pattern.edges.T.tolist(), el])


def write_csm_stream(path: str | Path, batch: UpdateBatch, *, timestamps: bool = False) -> None:
    """Write ``batch`` as a CSM stream (``e`` / ``-e`` lines with the edge label); with
    ``timestamps``, ``batch.ts`` goes into a 5th column (microsecond precision)."""
    kinds = np.where(batch.op > 0, "e", "-e").tolist()
    cols = [kinds, batch.u.tolist(), batch.v.tolist(), batch.label.tolist()]
    template = "%s %d %d %d\n"
    if timestamps:
        cols.append(batch.ts.tolist())
        template = "%s %d %d %d %.6f\n"
    with open(path, "w", encoding="utf-8") as fh:
        _write_rows(fh, template, cols)
