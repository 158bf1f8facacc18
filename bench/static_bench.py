"""Static matching time: the GPU matcher (gpu/static_match.py) against the CPU engine and, on
the same host in the same call, the published GPU static matchers gMatch and EGSM.

    python3 -P bench/static_bench.py --data DIR --out bench/results/static/static_bench.json \
        [--gmatch PATH --gmatch-unlabeled PATH --egsm PATH --peer-limit 300] \
        [--chunglu-edges 30000000] [--sets citeseer,oracle-github,enron] [--no-cpu] [--no-gpu]
    python3 -P bench/static_bench.py --graph G.graph --query Q1 --query Q2 --out rows.json

Graphs and patterns (``SETS``): citeseer with its six queries and seven 6-8 vertex
unlabelled shapes; oracle-github full.graph with Q_0..Q_10 and Q_12 (labelled, 3-8
vertices); enron unlabeled initial.graph with Q1..Q9 and clique6; with
``--chunglu-edges N``, a seeded Chung-Lu power-law graph of N edges (``dcsm gen-graph --model
chung-lu``; unlabelled) with ``--chunglu-shapes`` (default: triangle, clique4, diamond,
clique5). Only counts are timed.

Ours. GPU: ``StaticMatcher.count`` on a CSR already on the device (its build time is
reported once per graph as ``csr_s``), best of --repeat (a single run once one takes 2 s),
for the pattern (``gpu_s``, embeddings) and for its ``distinct`` twin (``gpu_distinct_s``,
one match per subgraph: symmetry-broken like the peers). CPU: ``CpuEngine.count_static``
(numba), on graphs of at most --cpu-max-edges edges: once, or again when the first took over
CPU_AGAIN_S (it may include numba compiling the pattern's kernels: ``cpu_s`` is then the
second, ``cpu_first_s`` the first; before, citeseer's triangle read 6.07 s). A GPU count
that differs from the CPU's, or a distinct count times |Aut| (``plan_query(p).automorphisms``,
label-preserving) that differs from the embedding count, stops the run.

Peers (each optional; built by you outside the repository, never committed; see
bench/results/static/README.md). For every row each given peer runs as its own process with
the graph and pattern written in its input format into a temporary folder (our converters
below), killed at ``--peer-limit`` seconds of wall time (recorded as timed out, never as a
time). Both peers count embeddings: gMatch enumerates one match per subgraph (symmetry
breaking) and prints ``Result`` = that times its |Aut| (and ``unique count``, neighbor
builds only); EGSM enumerates every embedding (``# Matches``). Each is checked against our
embedding count (and gMatch's unique count against embeddings / |Aut|); a row where a peer
disagrees is recorded as disagreeing. A peer's own time is its matching phase as it prints
it (gMatch ``# Processing``, EGSM ``Total join``; whole milliseconds), its query-dependent
preparation (gMatch candidate graph and graph transfer, EGSM Cuckoo tries and filtering)
separately, and the process's wall time (file parsing included).

* ``--gmatch``: any gMatch build that reads the text format (``-d``): bitmap/build/
  SubgraphMatching (its test suite's default), hash_table, or neighbor's _labeled. Every row.
* ``--gmatch-unlabeled``: gMatch neighbor/build/SubgraphMatching_unlabeled, given gMatch's
  binary CSR (``-b g.bin``); replaces --gmatch on rows where the graph and the pattern carry
  one label (the authors' choice for small patterns on large unlabelled graphs).
* ``--egsm``: EGSM (github RapidsAtHKUST/EGSM) build/EGSM ``-d g -q q``. Every row.

Ratio: ``peer_ratio`` = the faster peer's own time / ``gpu_s`` (> 1: ours is faster);
``cpu_ratio`` = cpu_s / gpu_s. Writes --out (JSON, rewritten after every row) and the same
rows as a markdown table beside it (``--md``, default: --out with suffix .md).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.plan import plan_query
from dcsm.errors import PatternError
from dcsm.gpu.label_count import counts_on_device
from dcsm.graphio import read_csm_query, read_graph
from dcsm.model import ANY_LABEL, Graph, Pattern


def _clique(n: int) -> list[tuple[int, int]]:
    return list(itertools.combinations(range(n), 2))


def _wheel(n: int) -> list[tuple[int, int]]:
    """Hub 0 joined to a cycle 1..n-1."""
    rim = n - 1
    return [(0, i) for i in range(1, n)] + [(i, i % rim + 1) for i in range(1, n)]


# Unlabelled shapes beside the query files (all vertex and edge labels 0).
SHAPES: dict[str, list[tuple[int, int]]] = {
    "triangle": _clique(3),
    "diamond": [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)],
    "clique4": _clique(4),
    "clique5": _clique(5),
    "clique6": _clique(6),
    "cycle6": [(i, (i + 1) % 6) for i in range(6)],
    "wheel6": _wheel(6),
    "prism6": [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (0, 3), (1, 4), (2, 5)],
    "wheel8": _wheel(8),
    "k4pair8": _clique(4) + [(a + 4, b + 4) for a, b in _clique(4)] + [(0, 4)],
    "cube8": [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
              (0, 4), (1, 5), (2, 6), (3, 7)],
    "path4": [(i, i + 1) for i in range(3)],
    "path6": [(i, i + 1) for i in range(5)],
    "star5": [(0, i) for i in range(1, 5)],
    "cycle4": [(i, (i + 1) % 4) for i in range(4)],
    "cycle5": [(i, (i + 1) % 5) for i in range(5)],
    "tailed4": [(0, 1), (1, 2), (2, 0), (0, 3)],
}  # fmt: skip


PREFIXES = ("l", "ab")  # shape(): all-different labels; two labels taking turns


def _prefix(name: str) -> str:
    """The PREFIXES entry ``name`` is a shape with, or "" (a plain shape, or none)."""
    return next((p for p in PREFIXES if name.startswith(p) and name[len(p) :] in SHAPES), "")


def shape(name: str, label: int = 0) -> Pattern:
    """SHAPES[name] with every vertex labelled ``label``; "l" + a shape: vertex i labelled
    i, all different (the typed chains and rings the label counter counts without a
    search, gpu/label_count.py); "ab" + a shape: vertex i labelled i % 2 (two labels taking
    turns round a ring: two accounts sharing two devices). Edge labels 0 (any for the
    labelled ones)."""
    if name in SHAPES:
        edges = SHAPES[name]
        return Pattern.build(name, [label] * (1 + max(max(e) for e in edges)),
                             [(u, v, 0) for u, v in edges])  # fmt: skip
    prefix = _prefix(name)
    edges = SHAPES[name[len(prefix) :]]
    n = 1 + max(max(e) for e in edges)
    labels = list(range(n)) if prefix == "l" else [i % 2 for i in range(n)]
    return Pattern.build(name, labels, [(u, v, None) for u, v in edges])


def known_shape(name: str) -> bool:
    return name in SHAPES or _prefix(name) != ""


# name -> (graph file, query folder, query files, extra shapes), under --data.
SETS: dict[str, tuple[str, str, list[str], list[str]]] = {
    "citeseer": ("citeseer/citeseer_unlabeled.graph", "citeseer/queries",
                 ["triangle", "cycle4", "diamond", "clique4", "house", "pentagon"],
                 ["cycle6", "wheel6", "prism6", "clique6", "wheel8", "k4pair8", "cube8"]),
    "oracle-github": ("oracle-github/full.graph", "oracle-github/queries",
                      [f"Q_{i}" for i in range(11)] + ["Q_12"], []),
    "enron": ("enron/unlabeled/initial.graph", "enron/unlabeled/queries",
              ["Q1_triangle", "Q2_4cycle", "Q3_tailed_triangle", "Q4_diamond", "Q5_4clique",
               "Q6_5cycle", "Q7_house", "Q8_bowtie", "Q9_5clique"],
              ["clique6"]),  # 969,840 embeddings; wheel6, prism6 take the CPU engine > 15 min
}  # fmt: skip
# At 200k edges (seed 0) the embeddings are: triangle 2.3M, clique4 26M, diamond 141M, clique5
# 358M; triangles grow about linearly with the edges, the others faster (hubs).
CHUNGLU_SHAPES = ["triangle", "clique4", "diamond", "clique5"]
CPU_AGAIN_S = 0.5  # a CPU count this long is timed again (the first may include compiling)


# -- the peers' input formats ----------------------------------------------------------------


@dataclass(frozen=True)
class PeerGraph:
    """A data graph with vertex ids 0..nv-1 (external ids in ascending order), for the peers.

    Attributes:
        labels: int64 (nv,); vertex labels.
        lo, hi: int64 (ne,); each undirected edge once, lo < hi.
        edge_labels: int32 (ne,); the peers ignore them (see :func:`peer_support`).
    """

    labels: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    edge_labels: np.ndarray

    @property
    def nv(self) -> int:
        return int(self.labels.shape[0])

    @property
    def ne(self) -> int:
        return int(self.lo.shape[0])

    def degrees(self) -> np.ndarray:
        return np.bincount(self.lo, minlength=self.nv) + np.bincount(self.hi, minlength=self.nv)


def compact(graph: Graph) -> PeerGraph:
    """``graph`` renumbered 0..nv-1 in ascending external id (isolated vertices kept)."""
    order = np.argsort(graph.vertex_ids, kind="stable")
    ids = graph.vertex_ids[order]
    a = np.searchsorted(ids, graph.src)
    b = np.searchsorted(ids, graph.dst)
    return PeerGraph(
        labels=graph.vertex_labels[order].astype(np.int64),
        lo=np.minimum(a, b).astype(np.int64),
        hi=np.maximum(a, b).astype(np.int64),
        edge_labels=np.asarray(graph.edge_labels, np.int32),
    )


_POW10 = 10 ** np.arange(19, dtype=np.int64)
_ROWS = 1 << 21  # rows formatted per block (bounds memory)


def ascii_rows(prefix: str, columns: list[np.ndarray]) -> bytes:
    """``prefix`` + one space-separated decimal column after another + newline, for every row
    of the equally long non-negative integer ``columns``; formatted with array operations
    (tens of millions of rows in seconds): each row is laid out at a fixed width with the
    leading zeros masked out, and the mask compresses the whole block at once."""
    cols = [np.asarray(c, np.int64) for c in columns]
    n = len(cols[0])
    if n == 0:
        return b""
    if any(len(c) != n for c in cols) or any(c.min() < 0 for c in cols):
        raise ValueError("ascii_rows wants equally long columns of non-negative integers")
    parts: list[np.ndarray] = []
    keep: list[np.ndarray] = []
    for ch in prefix.encode():
        parts.append(np.full((n, 1), ch, np.uint8))
        keep.append(np.ones((n, 1), bool))
    for c in cols:
        width = max(1, int(np.searchsorted(_POW10, c.max(), side="right")))
        scale = _POW10[:width][::-1]  # 10^(width-1) .. 1
        if width <= 9:  # 32-bit division is several times faster
            c, scale = c.astype(np.uint32), scale.astype(np.uint32)
        parts.append(np.full((n, 1), ord(" "), np.uint8))
        keep.append(np.ones((n, 1), bool))
        parts.append((48 + (c[:, None] // scale[None, :]) % 10).astype(np.uint8))
        significant = c[:, None] >= scale[None, :]
        significant[:, -1] = True  # 0 prints as "0"
        keep.append(significant)
    parts.append(np.full((n, 1), ord("\n"), np.uint8))
    keep.append(np.ones((n, 1), bool))
    return np.hstack(parts)[np.hstack(keep)].tobytes()


def _write_blocks(fh: Any, prefix: str, columns: list[np.ndarray]) -> None:
    n = len(columns[0])
    for k in range(0, n, _ROWS):
        fh.write(ascii_rows(prefix, [c[k : k + _ROWS] for c in columns]))


def write_tve_graph(path: str | Path, g: PeerGraph) -> None:
    """The text format gMatch (``-d``) and EGSM (``-d``) both read: ``t <nv> <ne>``, then
    ``v <id> <label> <degree>`` for ids 0..nv-1 in order, then ``e <u> <v>`` per undirected
    edge (no edge labels)."""
    with open(path, "wb") as fh:
        fh.write(f"t {g.nv} {g.ne}\n".encode())
        _write_blocks(fh, "v", [np.arange(g.nv), g.labels, g.degrees()])
        _write_blocks(fh, "e", [g.lo, g.hi])


def write_tve_query(path: str | Path, p: Pattern) -> None:
    """``p`` in the same format (query vertex ids 0..n-1; labels must be fixed)."""
    n = p.num_vertices
    deg = np.bincount(p.edges.ravel(), minlength=n)
    lines = [f"t {n} {p.num_edges}"]
    lines += [f"v {i} {int(p.vlabels[i])} {int(deg[i])}" for i in range(n)]
    lines += [f"e {int(u)} {int(v)}" for u, v in p.edges]
    Path(path).write_text("\n".join(lines) + "\n")


def write_gmatch_csr(path: str | Path, g: PeerGraph) -> None:
    """gMatch's binary CSR (``-b``; the name must contain ``.bin``): int32 nv, uint32 ne,
    uint64 offsets (nv + 1; the last is 2 ne), int32 labels (nv), int32 neighbours (2 ne),
    ascending within each row."""
    if g.nv >= 2**31 or 2 * g.ne >= 2**32:
        raise ValueError(f"gMatch's CSR holds < 2^31 vertices and < 2^31 edges ({g.nv}, {g.ne})")
    src = np.concatenate([g.lo, g.hi])
    dst = np.concatenate([g.hi, g.lo])
    order = np.argsort(src * g.nv + dst, kind="stable")
    off = np.zeros(g.nv + 1, np.uint64)
    np.cumsum(np.bincount(src, minlength=g.nv), out=off[1:])
    with open(path, "wb") as fh:
        fh.write(np.array([g.nv], np.int32).tobytes())
        fh.write(np.array([g.ne], np.uint32).tobytes())
        fh.write(off.tobytes())
        fh.write(g.labels.astype(np.int32).tobytes())
        fh.write(dst[order].astype(np.int32).tobytes())


def read_tve(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels, degrees, edges (m, 2)) of a file in the t/v/e format, checking its header,
    the id order and the degrees (what gMatch and EGSM rely on)."""
    tok = Path(path).read_text().split()
    if tok[0] != "t":
        raise ValueError(f"{path}: does not start with 't'")
    nv, ne = int(tok[1]), int(tok[2])
    body = tok[3:]
    if len(body) != 4 * nv + 3 * ne:
        raise ValueError(f"{path}: {len(body)} tokens after the header, want {4 * nv + 3 * ne}")
    v = np.array(body[: 4 * nv]).reshape(nv, 4)
    e = np.array(body[4 * nv :]).reshape(ne, 3)
    if (v[:, 0] != "v").any() or (e[:, 0] != "e").any():
        raise ValueError(f"{path}: want {nv} 'v' lines, then {ne} 'e' lines")
    if (v[:, 1].astype(np.int64) != np.arange(nv)).any():
        raise ValueError(f"{path}: vertex ids are not 0..{nv - 1} in order")
    edges = e[:, 1:].astype(np.int64).reshape(ne, 2)
    deg = v[:, 3].astype(np.int64)
    if (np.bincount(edges.ravel(), minlength=nv) != deg).any():
        raise ValueError(f"{path}: declared degrees differ from the edges")
    return v[:, 2].astype(np.int64), deg, edges


def read_gmatch_csr(path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, labels, neighbours) of a gMatch binary CSR, checking its sizes."""
    raw = Path(path).read_bytes()
    nv = int(np.frombuffer(raw, np.int32, 1, 0)[0])
    ne = int(np.frombuffer(raw, np.uint32, 1, 4)[0])
    want = 8 + 8 * (nv + 1) + 4 * nv + 8 * ne
    if len(raw) != want:
        raise ValueError(f"{path}: {len(raw)} bytes, want {want} for nv={nv}, ne={ne}")
    off = np.frombuffer(raw, np.uint64, nv + 1, 8)
    labels = np.frombuffer(raw, np.int32, nv, 8 + 8 * (nv + 1))
    nbr = np.frombuffer(raw, np.int32, 2 * ne, 8 + 8 * (nv + 1) + 4 * nv)
    if int(off[-1]) != 2 * ne:
        raise ValueError(f"{path}: last offset {int(off[-1])} != 2 * {ne}")
    return off, labels, nbr


def peer_support(p: Pattern, g: PeerGraph) -> str | None:
    """Why the peers cannot run ``p`` on ``g`` exactly, or None. Neither reads edge labels;
    both read fixed vertex labels only."""
    if (p.vlabels == ANY_LABEL).any():
        return "wildcard vertex label"
    if p.num_vertices > 16 or p.num_edges > 32:
        return "more than 16 vertices or 32 edges"
    el = p.elabels
    if (el == ANY_LABEL).all():
        return None
    if g.ne and (g.edge_labels != 0).any():
        return "edge labels"
    if ((el != 0) & (el != ANY_LABEL)).any():
        return "edge labels"
    return None


def one_label(p: Pattern, g: PeerGraph) -> bool:
    """Graph and pattern carry one vertex label (an unlabelled build matches exactly)."""
    if g.nv == 0 or (g.labels != g.labels[0]).any():
        return False
    return bool((p.vlabels == g.labels[0]).all())


# -- running the peers -----------------------------------------------------------------------


def run_process(cmd: list[str], limit: float, log: Path) -> tuple[str, float, bool, int | None]:
    """(its stdout + stderr, wall seconds, timed out, exit code) of ``cmd``, killed (with
    its process group) after ``limit`` seconds; output goes through ``log``."""
    t = time.perf_counter()
    with open(log, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc: int | None = proc.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc, timed_out = None, True
    wall = time.perf_counter() - t
    return log.read_text(errors="replace"), wall, timed_out, rc


_MS = r"(\d+)\(host\),? (\d+)\(kernel\)"


def _ms_host(text: str, name: str, last: bool = True) -> float | None:
    """Seconds of the host figure of the last (or first) '<name>... time (ms): H(host) ...'."""
    hits = re.findall(re.escape(name) + r",? time \(ms\): " + _MS, text)
    if not hits:
        return None
    return int(hits[-1 if last else 0][0]) / 1000


def parse_gmatch(text: str) -> dict:
    """count (``Result``: embeddings), unique, seconds (``# Processing``), prep_s."""
    count = re.findall(r"Result: (\d+)", text)
    unique = re.findall(r"unique count: (\d+)", text)
    prep = _ms_host(text, "# Preparation")  # bitmap / hash_table builds
    if prep is None:
        prep = _ms_host(text, "# Transfer time of the data graph")  # neighbor builds
    return {
        "count": int(count[-1]) if count else None,
        "unique": int(unique[-1]) if unique else None,
        "seconds": _ms_host(text, "# Processing"),
        "prep_s": prep,
    }


def parse_egsm(text: str) -> dict:
    """count (``# Matches``: embeddings), seconds (``Total join``), prep_s (tries + filter)."""
    count = re.findall(r"# Matches: (\d+)", text)
    parts = [_ms_host(text, "Build Cuckoo Tries"), _ms_host(text, "Filtering")]
    return {
        "count": int(count[-1]) if count else None,
        "unique": None,
        "seconds": _ms_host(text, "Total join"),
        "prep_s": None if None in parts else round(sum(p for p in parts if p is not None), 3),
    }


@dataclass
class Peer:
    name: str  # JSON field prefix
    label: str  # table heading
    binary: Path
    parse: Any
    graph_flag: str  # "-d" (text) or "-b" (gMatch CSR)
    only_one_label: bool = False  # an unlabelled build: rows with one label only

    def command(self, graph: Path, query: Path) -> list[str]:
        return [str(self.binary), self.graph_flag, str(graph), "-q", str(query)]


class PeerFiles:
    """The current graph (and each pattern) in the peers' formats, in one temporary folder."""

    def __init__(self, root: Path | None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="static_bench_", dir=root))
        self.graph: PeerGraph | None = None
        self._paths: dict[str, Path] = {}
        self.write_s = 0.0

    def set_graph(self, graph: Graph) -> None:
        self.graph = compact(graph)
        for p in self._paths.values():
            p.unlink(missing_ok=True)
        self._paths.clear()

    def path(self, kind: str) -> Path:
        """``text`` or ``csr`` of the current graph, written on first use."""
        assert self.graph is not None
        if kind not in self._paths:
            t = time.perf_counter()
            if kind == "-d":
                self._paths[kind] = self.dir / "data.graph"
                write_tve_graph(self._paths[kind], self.graph)
            else:
                self._paths[kind] = self.dir / "data.bin"
                write_gmatch_csr(self._paths[kind], self.graph)
            self.write_s += time.perf_counter() - t
        return self._paths[kind]

    def query(self, p: Pattern) -> Path:
        path = self.dir / f"query_{p.name}.graph"
        write_tve_query(path, p)
        return path

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def run_peer(peer: Peer, files: PeerFiles, p: Pattern, ours: int | None, aut: int,
             limit: float) -> dict:  # fmt: skip
    """The row's fields for ``peer``: ``<name>_s``, ``_prep_s``, ``_wall_s``, ``_count``,
    ``_status`` (agrees / DISAGREES / timed out / failed / unsupported: why / unchecked)."""
    key = peer.name
    out: dict[str, Any] = {f"{key}_{f}": None for f in ("s", "prep_s", "wall_s", "count")}
    assert files.graph is not None
    why = peer_support(p, files.graph)
    if why is None and peer.only_one_label and not one_label(p, files.graph):
        why = "labelled row (unlabelled build)"
    if why is not None:
        return {**out, f"{key}_status": f"unsupported: {why}"}
    graph = files.path(peer.graph_flag)
    query = files.query(p)
    log = files.dir / f"{key}_{p.name}.log"
    text, wall, timed_out, rc = run_process(peer.command(graph, query), limit, log)
    out[f"{key}_wall_s"] = round(wall, 3)
    out[f"{key}_binary"] = peer.binary.name
    if timed_out:
        return {**out, f"{key}_status": f"timed out (> {limit:g} s)"}
    got = peer.parse(text)
    if rc != 0 or got["count"] is None:
        return {**out, f"{key}_status": f"failed (exit {rc}): {text[-400:]!r}"}
    out.update({f"{key}_s": got["seconds"], f"{key}_prep_s": got["prep_s"],
                f"{key}_count": got["count"]})  # fmt: skip
    if got["unique"] is not None:
        out[f"{key}_unique"] = got["unique"]
    if ours is None:
        status = "unchecked"
    else:
        same = got["count"] == ours
        if got["unique"] is not None:
            same = same and got["unique"] * aut == ours
        status = "agrees" if same else "DISAGREES"
    return {**out, f"{key}_status": status}


# -- ours ------------------------------------------------------------------------------------


def gpu_matcher() -> Any:
    """A StaticMatcher, or exit with why not (CuPy missing or no device)."""
    try:
        from dcsm.gpu.static_match import StaticMatcher

        return StaticMatcher()
    except Exception as exc:  # ImportError (no CuPy), CUDARuntimeError (no device), ...
        sys.exit(
            f"static_bench: the GPU matcher is unavailable ({type(exc).__name__}: {exc}); "
            "pass --no-gpu to time the CPU engine (and the peers) only"
        )


def best_of(repeat: int, fn: Any, *args: Any) -> tuple[Any, float]:
    """(value, best seconds) of ``repeat`` calls; one call only when it takes >= 2 s."""
    best, value = float("inf"), None
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - t)
        if best >= 2.0:
            break
    return value, best


def _r(x: float | None, nd: int = 6) -> float | None:
    return None if x is None else round(x, nd)


# -- report ----------------------------------------------------------------------------------


def _fmt_s(x: float | None) -> str:
    return "" if x is None else f"{x:.4f}"


def _peer_cell(r: dict, key: str) -> str:
    status = r.get(f"{key}_status")
    if status is None:
        return ""
    if status.startswith("unsupported"):
        return "n/a"
    if status.startswith("timed out"):
        return "timed out"
    if status.startswith("failed"):
        return "failed"
    s = r.get(f"{key}_s")
    cell = "?" if s is None else f"{s:.3f}"
    if status == "DISAGREES":
        cell += f" **count {r[f'{key}_count']}**"
    return cell


def markdown(rows: list[dict], meta: dict) -> str:
    lines = [
        "# Static matching: ours (GPU, CPU) and gMatch, EGSM on the same host",
        "",
        f"Host: {meta.get('device') or '?'}; peer limit {meta['peer_limit']} s; "
        f"peers: {', '.join(f'{k} = {v}' for k, v in meta['peers'].items()) or 'none'}.",
        "Seconds; peers' own matching time (ms resolution); ratio = faster peer / ours GPU "
        "(> 1: ours faster). n/a: pattern outside the peer's input (see status in the JSON).",
        "",
        "Counted: by the label counter (a tree or a cycle with all-different vertex labels, "
        "gpu/label_count.py) or by the search; search s: the device search of the same "
        "pattern (--search).",
        "",
        "| graph | pattern | V | labelled | embeddings | Aut | counted | ours GPU s "
        "| ours distinct s | search s | CPU s | gMatch s | EGSM s | faster peer | ratio | counts |",
        "| --- | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: "
        "| --- | ---: | --- |",
    ]
    for r in rows:
        checks = [r.get(f"{k}_status") for k in ("gmatch", "egsm")]
        bad = [c for c in checks if c == "DISAGREES"]
        ok = [c for c in checks if c == "agrees"]
        counts = "DISAGREE" if bad else ("equal" if ok else "")
        ratio = r.get("peer_ratio")
        if ratio is None and r.get("peer_ratio_at_least") is not None:  # not a result
            ratio_cell = f"peers timed out (> {r['peer_ratio_at_least']:.1f})"
        elif ratio is None and r.get("peer_ratio_below") is not None:
            ratio_cell = f"< {r['peer_ratio_below']:.2f}"
        else:
            ratio_cell = "" if ratio is None else f"{ratio:.2f}"
        lines.append(
            f"| {r['graph']} | {r['pattern']} | {r['vertices']} | "
            f"{'yes' if r['labelled'] else 'no'} | {r['count']:,} | {r['automorphisms']} | "
            f"{'labels' if r.get('label_counted') else 'search'} | "
            f"{_fmt_s(r['gpu_s'])} | {_fmt_s(r['gpu_distinct_s'])} | "
            f"{_fmt_s(r.get('gpu_search_s'))} | {_fmt_s(r['cpu_s'])} | "
            f"{_peer_cell(r, 'gmatch')} | {_peer_cell(r, 'egsm')} | "
            f"{r.get('faster_peer') or ''} | {ratio_cell} | {counts} |"
        )
    return "\n".join(lines) + "\n"


# -- main ------------------------------------------------------------------------------------


def work_list(args: argparse.Namespace) -> list[tuple[str, Any, list[Pattern]]]:
    """(graph name, path or a callable returning the Graph, patterns)."""
    if args.graph:
        return [(str(args.graph), args.graph, [read_csm_query(q) for q in args.query])]
    out: list[tuple[str, Any, list[Pattern]]] = []
    for name in [s for s in args.sets.split(",") if s]:
        if name not in SETS:
            sys.exit(f"static_bench: unknown set {name!r} (known: {', '.join(SETS)})")
        gpath, qdir, queries, extra = SETS[name]
        pats = [read_csm_query(args.data / qdir / q) for q in queries]
        out.append((gpath, args.data / gpath, pats + [shape(s) for s in extra]))
    if args.chunglu_edges:
        from dcsm.loadgen.gen_stream import chunglu_graph

        n, seed = args.chunglu_edges, args.chunglu_seed
        names = [s for s in args.chunglu_shapes.split(",") if s]
        if unknown := sorted(s for s in names if not known_shape(s)):
            sys.exit(f"static_bench: unknown shapes {unknown} (known: {', '.join(SHAPES)}, "
                     "each also as l + name: vertex i labelled i)")  # fmt: skip
        pats = [shape(s) for s in names]
        labels = args.chunglu_labels
        gname = f"chung-lu {n:,} edges (seed {seed}" + (
            f", {labels} labels)" if labels > 1 else ")"
        )
        out.append((gname, lambda: chunglu_graph(n, labels=labels, seed=seed), pats))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated: " + ", ".join(SETS))
    ap.add_argument("--graph", type=Path, help="one graph file instead of the sets")
    ap.add_argument("--query", type=Path, action="append", default=[], help="with --graph")
    ap.add_argument("--chunglu-edges", type=int, default=0, metavar="N",
                    help="add a Chung-Lu graph of N edges (gamma 2.3, N/9 vertices)")  # fmt: skip
    ap.add_argument("--chunglu-seed", type=int, default=0)
    ap.add_argument("--chunglu-labels", type=int, default=1, metavar="L",
                    help="vertex labels of the Chung-Lu graph, uniform (default 1)")  # fmt: skip
    ap.add_argument("--chunglu-shapes", default=",".join(CHUNGLU_SHAPES),
                    help="its patterns, from: " + ", ".join(SHAPES))  # fmt: skip
    ap.add_argument("--out", type=Path, required=True, help="JSON rows")
    ap.add_argument("--md", type=Path, help="markdown table (default: --out with .md)")
    ap.add_argument("--repeat", type=int, default=3, help="ours: best of N")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU engine's counts")
    ap.add_argument("--cpu-max-edges", type=int, default=5_000_000, metavar="N",
                    help="skip the CPU engine on graphs of more edges (default 5M)")  # fmt: skip
    ap.add_argument("--no-gpu", action="store_true", help="skip our GPU matcher (no CuPy)")
    ap.add_argument("--search", action="store_true",
                    help="also time the device search of the patterns the label counter counts "
                         "(gpu_search_s; it may not finish on large graphs)")  # fmt: skip
    ap.add_argument("--gmatch", type=Path, help="gMatch binary reading -d text (every row)")
    ap.add_argument("--gmatch-unlabeled", type=Path,
                    help="gMatch SubgraphMatching_unlabeled (-b CSR; one-label rows)")  # fmt: skip
    ap.add_argument("--egsm", type=Path, help="EGSM binary (every row)")
    ap.add_argument("--peer-limit", type=float, default=300.0, metavar="SECONDS",
                    help="wall-time limit of one peer run (default 300)")  # fmt: skip
    ap.add_argument("--peer-tmp", type=Path, help="folder for the peers' input files")
    args = ap.parse_args(argv)
    if args.no_gpu and args.no_cpu:
        ap.error("--no-gpu with --no-cpu leaves no count of ours to check the peers against")
    if args.query and not args.graph:
        ap.error("--query needs --graph")
    for opt in ("gmatch", "gmatch_unlabeled", "egsm"):
        b = getattr(args, opt)
        if b is not None and not (b.is_file() and os.access(b, os.X_OK)):
            ap.error(f"--{opt.replace('_', '-')} {b}: not an executable file")
    md_path = args.md or args.out.with_suffix(".md")
    work = work_list(args)
    if not work:
        ap.error("nothing to run: give --sets, --graph or --chunglu-edges")

    peers: list[Peer] = []
    if args.gmatch_unlabeled:
        peers.append(Peer("gmatch", "gMatch", args.gmatch_unlabeled.absolute(), parse_gmatch,
                          "-b", only_one_label=True))  # fmt: skip
    if args.gmatch:
        peers.append(Peer("gmatch", "gMatch", args.gmatch.absolute(), parse_gmatch, "-d"))
    if args.egsm:
        peers.append(Peer("egsm", "EGSM", args.egsm.absolute(), parse_egsm, "-d"))

    matcher = None if args.no_gpu else gpu_matcher()
    device = None
    if matcher is not None:
        import cupy as cp

        device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
    meta = {"device": device, "peer_limit": args.peer_limit,
            "peers": {p.label + (" (unlabelled rows)" if p.only_one_label else ""): str(p.binary)
                      for p in peers}}  # fmt: skip
    files = PeerFiles(args.peer_tmp) if peers else None
    warm = None
    rows: list[dict] = []
    try:
        for gname, source, patterns in work:
            t = time.perf_counter()
            graph = source() if callable(source) else read_graph(source)
            load_s = time.perf_counter() - t
            cpu = CpuEngine()
            cpu.load_graph(graph)
            use_cpu = not args.no_cpu and graph.num_edges <= args.cpu_max_edges
            if use_cpu and warm is None:
                warm = cpu.count_static(Pattern.build("e", [None, None], [(0, 1, None)]))
            csr, csr_s = None, None
            if matcher is not None:
                g = cpu.export_graph()  # vertex_ids in the CPU engine's internal order
                ids = g.vertex_ids
                sorter = np.argsort(ids, kind="stable")
                a = sorter[np.searchsorted(ids, g.src, sorter=sorter)]
                b = sorter[np.searchsorted(ids, g.dst, sorter=sorter)]
                t = time.perf_counter()
                csr = matcher.csr_from_edges(len(ids), np.minimum(a, b), np.maximum(a, b),
                                             g.edge_labels, g.vertex_labels, ids)  # fmt: skip
                csr_s = time.perf_counter() - t
            if files is not None:
                files.set_graph(graph)
            print(f"# {gname}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges, "
                  f"loaded in {load_s:.1f} s", flush=True)  # fmt: skip
            for p in patterns:
                aut = plan_query(p).automorphisms
                distinct = dataclasses.replace(p, distinct=True)
                count = gpu_s = dcount = dgpu_s = cpu_s = None
                if matcher is not None:
                    count, gpu_s = best_of(args.repeat, matcher.count, csr, p)
                    try:
                        dcount, dgpu_s = best_of(args.repeat, matcher.count, csr, distinct)
                    except PatternError as exc:  # a wildcard symmetry: no distinct twin
                        print(f"{gname} {p.name}: no distinct count ({exc})", file=sys.stderr)
                by_labels = counts_on_device(p)
                search_s = None
                if matcher is not None and args.search and by_labels:
                    t = time.perf_counter()
                    searched = matcher.count(csr, p, by_labels=False)
                    search_s = time.perf_counter() - t
                    if searched != count:
                        print(f"{gname} {p.name}: search {searched} != label count {count}",
                              file=sys.stderr)  # fmt: skip
                        return 1
                cpu_first_s = None
                if use_cpu:
                    t = time.perf_counter()
                    want = cpu.count_static(p)
                    cpu_s = time.perf_counter() - t
                    if cpu_s > CPU_AGAIN_S:  # the first may have compiled the pattern's kernels
                        cpu_first_s = cpu_s
                        t = time.perf_counter()
                        cpu.count_static(p)
                        cpu_s = time.perf_counter() - t
                    if count is not None and want != count:
                        print(f"{gname} {p.name}: GPU {count} != CPU {want}", file=sys.stderr)
                        return 1
                    count = want
                if count is None:
                    print(f"{gname}: {graph.num_edges:,} edges > --cpu-max-edges with --no-gpu: "
                          "no count of ours; skipped", file=sys.stderr)  # fmt: skip
                    break
                if dcount is not None and dcount * aut != count:
                    print(f"{gname} {p.name}: distinct {dcount} x |Aut| {aut} != {count}",
                          file=sys.stderr)  # fmt: skip
                    return 1
                row: dict[str, Any] = {
                    "graph": gname, "pattern": p.name, "vertices": p.num_vertices,
                    "edges": p.num_edges, "labelled": bool(len(set(p.vlabels.tolist())) > 1
                                                           or graph_labelled(graph)),
                    "count": count, "automorphisms": aut, "distinct": count // aut,
                    "gpu_s": _r(gpu_s), "gpu_distinct_s": _r(dgpu_s),
                    "cpu_s": _r(cpu_s), "cpu_first_s": _r(cpu_first_s),
                    "cpu_ratio": None if cpu_s is None or not gpu_s else round(cpu_s / gpu_s, 2),
                    "csr_s": _r(csr_s), "label_counted": by_labels,
                    "gpu_search_s": _r(search_s),
                    "search_ratio": round(search_s / gpu_s, 1) if search_s and gpu_s else None,
                }  # fmt: skip
                if files is not None:
                    for peer in peers:
                        status = row.get(f"{peer.name}_status")
                        if status is None or status.startswith("unsupported: labelled"):
                            # an unlabelled build passes labelled rows to the next build
                            row.update(run_peer(peer, files, p, count, aut, args.peer_limit))
                    add_ratio(row, [q.name for q in peers], gpu_s, args.peer_limit)
                rows.append(row)
                print(json.dumps(row), flush=True)
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
                md_path.write_text(markdown(rows, meta))
            csr = None
            if matcher is not None:  # give the peers the device memory back
                import cupy as cp

                cp.get_default_memory_pool().free_all_blocks()
    finally:
        if files is not None:
            files.close()
    return 0


def graph_labelled(graph: Graph) -> bool:
    lab = graph.vertex_labels
    return bool(lab.size and (lab != lab[0]).any())


def add_ratio(row: dict, names: list[str], gpu_s: float | None, limit: float) -> None:
    """faster_peer, faster_peer_s, peer_ratio (faster peer / ours); where every peer that ran
    timed out, peer_ratio_at_least = limit / ours."""
    done = {n: row[f"{n}_s"] for n in dict.fromkeys(names)
            if row.get(f"{n}_status") in ("agrees", "unchecked")
            and row.get(f"{n}_s") is not None}  # fmt: skip
    row["faster_peer"] = row["faster_peer_s"] = row["peer_ratio"] = None
    row["peer_ratio_at_least"] = row["peer_ratio_below"] = None
    if done:
        name = min(done, key=lambda n: done[n])
        row["faster_peer"], row["faster_peer_s"] = name, done[name]
        if gpu_s and done[name] > 0:
            row["peer_ratio"] = round(done[name] / gpu_s, 2)
        elif gpu_s:  # it printed 0 ms: under its 1 ms resolution
            row["peer_ratio_below"] = round(0.001 / gpu_s, 2)
    elif gpu_s and any(str(row.get(f"{n}_status", "")).startswith("timed out") for n in names):
        row["peer_ratio_at_least"] = round(limit / gpu_s, 1)


if __name__ == "__main__":
    sys.exit(main())
