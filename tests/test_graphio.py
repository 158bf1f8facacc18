"""Readers and writers of graph, query and stream files: every error names the file and the
line, and good files read into exactly the arrays written down here by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dcsm.errors import InputFileError
from dcsm.graphio import (
    read_csm_graph,
    read_csm_query,
    read_csm_stream,
    read_graph,
    read_snap,
    write_csm_graph,
    write_csm_query,
    write_csm_stream,
)
from dcsm.model import ANY_LABEL, Graph, Pattern, UpdateBatch


def write(tmp_path: Path, text: str, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(reader, path: Path) -> InputFileError:  # type: ignore[no-untyped-def]
    with pytest.raises(InputFileError) as info:
        reader(path)
    return info.value


# -- good files ----------------------------------------------------------------------------


def test_csm_graph(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "# a comment\nv 10 1\nv 3 0\n\nv 7 2\ne 10 3 0\ne 7 10\ne 3 10 5\ne 3 7 4\n",
    )
    g = read_csm_graph(path)
    assert g.vertex_ids.tolist() == [10, 3, 7]
    assert g.vertex_labels.tolist() == [1, 0, 2]
    # The repeated pair 3-10 folds into the first one; a missing edge label is 0.
    assert list(zip(g.src.tolist(), g.dst.tolist(), g.edge_labels.tolist(), strict=True)) == [
        (3, 10, 0),
        (7, 10, 0),
        (3, 7, 4),
    ]
    assert g.vertex_ids.dtype == np.int64 and g.vertex_labels.dtype == np.int32


def test_csm_query(tmp_path: Path) -> None:
    path = write(tmp_path, "v 0 2\nv 1 1\nv 2 2\ne 0 1 0\ne 1 2\ne 2 0 3\n", "tri.q")
    p = read_csm_query(path)
    assert p.name == "tri"
    assert p.vlabels.tolist() == [2, 1, 2]
    assert p.edges.tolist() == [[0, 1], [1, 2], [0, 2]]
    # A query edge without a label matches any label.
    assert p.elabels.tolist() == [0, ANY_LABEL, 3]


def test_csm_stream_with_and_without_labels(tmp_path: Path) -> None:
    path = write(tmp_path, "e 1 2 0\n# c\n-e 2 1 3\ne 5 9\n")
    s = read_csm_stream(path)
    assert s.seq.tolist() == [0, 1, 2]
    assert s.op.tolist() == [1, -1, 1]
    assert s.u.tolist() == [1, 2, 5] and s.v.tolist() == [2, 1, 9]
    assert s.label.tolist() == [0, 3, 0]
    assert s.u_label.tolist() == [ANY_LABEL] * 3
    assert s.ts.tolist() == [0.0, 0.0, 0.0]


def test_csm_stream_with_timestamps(tmp_path: Path) -> None:
    path = write(tmp_path, "e 1 2 0 0.5\n-e 1 2 0 0.5\ne 3 4 1 2.25\n")
    s = read_csm_stream(path)
    assert s.ts.tolist() == [0.5, 0.5, 2.25]
    assert s.label.tolist() == [0, 0, 1]


def test_snap_header_directions_duplicates_self_loops(tmp_path: Path) -> None:
    path = write(tmp_path, "5 6\n0\t1\n1\t0\n1 2\n2 2\n4 1\n1 4\n")
    g = read_snap(path)
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), strict=True)) == [(0, 1), (1, 2), (1, 4)]
    assert g.vertex_ids.tolist() == [0, 1, 2, 4]
    assert (g.vertex_labels == 0).all() and (g.edge_labels == 0).all()


def test_snap_first_line_that_is_an_edge(tmp_path: Path) -> None:
    # "2 1" counts the lines after it, but vertex 5 is not below 2: an edge, not a header.
    g = read_snap(write(tmp_path, "% comment\n2 1\n1 5\n"))
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), strict=True)) == [(1, 2), (1, 5)]
    # "3 1" does not count the two lines after it.
    g = read_snap(write(tmp_path, "3 1\n1 2\n0 2\n"))
    assert sorted(zip(g.src.tolist(), g.dst.tolist(), strict=True)) == [(0, 2), (1, 2), (1, 3)]
    # A file of one line is one edge ("1 0" also reads as "|V| = 1, no edge after it").
    g = read_snap(write(tmp_path, "1 0\n"))
    assert list(zip(g.src.tolist(), g.dst.tolist(), strict=True)) == [(0, 1)]


def test_read_graph_tells_formats_apart(tmp_path: Path) -> None:
    csm = read_graph(write(tmp_path, "# x\nv 0 4\nv 1 4\ne 0 1 0\n", "a"))
    assert csm.vertex_labels.tolist() == [4, 4]
    snap = read_graph(write(tmp_path, "# x\n0 1\n", "b"))
    assert snap.num_edges == 1 and snap.vertex_labels.tolist() == [0, 0]
    empty = read_graph(write(tmp_path, "# nothing\n\n", "c"))
    assert empty.num_vertices == 0 and empty.num_edges == 0


def test_csm_query_writer(tmp_path: Path) -> None:
    p = Pattern.build("tailed", [1, 2, 1, 0], [(0, 1, 4), (1, 2, 0), (0, 2, 4), (2, 3, 1)])
    write_csm_query(tmp_path / "q", p)
    back = read_csm_query(tmp_path / "q")
    for field in ("vlabels", "edges", "elabels"):
        np.testing.assert_array_equal(getattr(back, field), getattr(p, field))

    wild = Pattern.build("wild", [None, 2], [(0, 1, None)])
    with pytest.raises(ValueError, match="wildcards"):
        write_csm_query(tmp_path / "w", wild)
    write_csm_query(tmp_path / "w", wild, any_label=0)
    assert (tmp_path / "w").read_text() == "v 0 0\nv 1 2\ne 0 1 0\n"


def test_writers_round_trip(tmp_path: Path) -> None:
    g = Graph(
        vertex_ids=np.array([5, 2**40, 0], np.int64),
        vertex_labels=np.array([3, 0, 7], np.int32),
        src=np.array([5, 0], np.int64),
        dst=np.array([2**40, 5], np.int64),
        edge_labels=np.array([1, 0], np.int32),
    )
    write_csm_graph(tmp_path / "g", g)
    assert (tmp_path / "g").read_text() == (f"v 5 3\nv {2**40} 0\nv 0 7\ne 5 {2**40} 1\ne 0 5 0\n")
    back = read_csm_graph(tmp_path / "g")
    for field in ("vertex_ids", "vertex_labels", "src", "dst", "edge_labels"):
        np.testing.assert_array_equal(getattr(back, field), getattr(g, field))

    s = UpdateBatch.from_arrays(
        np.array([1, -1]), np.array([1, 3]), np.array([2, 1]), np.array([0, 2]),
        ts=np.array([0.25, 1.5]),
    )  # fmt: skip
    write_csm_stream(tmp_path / "s", s)
    assert (tmp_path / "s").read_text() == "e 1 2 0\n-e 3 1 2\n"
    write_csm_stream(tmp_path / "t", s, timestamps=True)
    assert (tmp_path / "t").read_text() == "e 1 2 0 0.250000\n-e 3 1 2 1.500000\n"
    assert read_csm_stream(tmp_path / "t").ts.tolist() == [0.25, 1.5]


# -- errors --------------------------------------------------------------------------------

GRAPH_ERRORS = [
    ("v 0 1\nv 1\n", 2, "'v' line needs 2 fields, got 1"),
    ("v 0 1\nv 1 2 3\n", 2, "'v' line needs 2 fields, got 3"),
    ("v x 1\n", 1, "vertex id 'x' is not an integer"),
    ("v -1 1\n", 1, "vertex id -1 is outside"),
    ("v 0 1.5\n", 1, "label '1.5' is not an integer"),
    ("v 0 4294967296\n", 1, "label 4294967296 is outside"),
    ("v 0 1\nv 0 2\n", 2, "vertex 0 is declared twice"),
    ("v 0 1\nv 1 1\ne 0 2 0\n", 3, "edge uses undeclared vertex 2"),
    ("v 0 1\ne 0 0 0\n", 2, "self loop on vertex 0"),
    ("v 0 1\nv 1 1\ne 0 1 0 9\n", 3, "'e' line needs 2 to 3 fields, got 4"),
    ("v 0 1\nx 0 1\n", 2, "unknown line type 'x'"),
    ("v 0 1\n-e 0 1 0\n", 2, "unknown line type '-e'"),
]


@pytest.mark.parametrize("text,line,reason", GRAPH_ERRORS)
def test_graph_errors(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = write(tmp_path, text)
    err = error_of(read_csm_graph, path)
    assert str(err).startswith(f"{path}:{line}: {reason}")
    assert (err.path, err.line) == (str(path), line)


QUERY_ERRORS = [
    ("v 0 1\nv 1\n", 2, "'v' line needs 2 fields, got 1"),
    ("v 0 1\nv 0 1\n", 2, "vertex 0 is declared twice"),
    ("v 0 1\nv 1 1\ne 0 b 0\n", 3, "vertex id 'b' is not an integer"),
    ("v 0 1\nv 1 1\nq 0 1\n", 3, "unknown line type 'q'"),
    ("v 0 1\nv 2 1\ne 0 2\n", None, "query vertex ids must be 0..n-1"),
    ("v 0 1\nv 1 1\nv 2 1\ne 0 1\n", None, "invalid pattern: edges: the pattern is disconnected"),
    ("v 0 1\nv 1 1\ne 0 1\ne 1 1\n", None, "invalid pattern: edges[1]: self loop on vertex 1"),
    ("v 0 1\nv 1 1\ne 0 1\ne 1 0\n", None, "invalid pattern: edges[1]: duplicate of edges[0]"),
    ("v 0 1\nv 1 1\ne 0 5\n", None, "invalid pattern: edges[0].v: vertex 5 is not declared"),
    ("v 0 1\nv 1 1\n", None, "invalid pattern: edges: a pattern needs at least one edge"),
    ("", None, "invalid pattern: vertices: a pattern needs at least one edge and two vertices"),
    (
        "".join(f"v {i} 0\n" for i in range(17)) + "".join(f"e {i} {i + 1}\n" for i in range(16)),
        None,
        "invalid pattern: vertices: 17 vertices; at most 16 are supported",
    ),
]


@pytest.mark.parametrize("text,line,reason", QUERY_ERRORS)
def test_query_errors(tmp_path: Path, text: str, line: int | None, reason: str) -> None:
    path = write(tmp_path, text)
    err = error_of(read_csm_query, path)
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(err).startswith(f"{where}: {reason}")
    assert err.line == line


STREAM_ERRORS = [
    ("e 1 2 0\nv 1 0\n", 2, "unknown line type 'v'"),
    ("e 1\n", 1, "'e' line needs 2 to 4 fields, got 1"),
    ("-e 1 2 0 1.0 7\n", 1, "'-e' line needs 2 to 4 fields, got 5"),
    ("e 1 2 0\ne 1 -2 0\n", 2, "vertex id -2 is outside"),
    ("e 1 2 x\n", 1, "label 'x' is not an integer"),
    ("e 1 2 0 0.5\ne 1 3 0\n", 2, "the first update has a timestamp column"),
    ("e 1 2 0\ne 1 3 0 0.5\n", 2, "the first update has no timestamp column"),
    ("e 1 2 0 soon\n", 1, "timestamp 'soon' is not a number"),
    ("e 1 2 0 nan\n", 1, "timestamp 'nan' is not a finite number >= 0"),
    ("e 1 2 0 -1\n", 1, "timestamp '-1' is not a finite number >= 0"),
    ("e 1 2 0 2.0\ne 1 3 0 1.0\n", 2, "timestamp 1.0 is before the previous one (2.0)"),
]


@pytest.mark.parametrize("text,line,reason", STREAM_ERRORS)
def test_stream_errors(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = write(tmp_path, text)
    err = error_of(read_csm_stream, path)
    assert str(err).startswith(f"{path}:{line}: {reason}")


SNAP_ERRORS = [
    ("0 1\n2\n", 2, "expected '<u> <v>', got '2'"),
    ("0 1\n2 z\n", 2, "vertex id 'z' is not an integer"),
    ("0 -1\n", 1, "vertex id -1 is outside"),
]


@pytest.mark.parametrize("text,line,reason", SNAP_ERRORS)
def test_snap_errors(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = write(tmp_path, text)
    err = error_of(read_snap, path)
    assert str(err).startswith(f"{path}:{line}: {reason}")


@pytest.mark.parametrize(
    "reader", [read_csm_graph, read_csm_query, read_csm_stream, read_snap, read_graph]
)
def test_missing_and_binary_files(tmp_path: Path, reader) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "nope"
    assert str(error_of(reader, missing)) == f"{missing}: No such file or directory"
    binary = tmp_path / "bin"
    binary.write_bytes(b"v 0 1\n\xff\xfe\x00garbage\n")
    assert str(error_of(reader, binary)).startswith(f"{binary}: not a text file")
    assert str(error_of(reader, tmp_path)).startswith(f"{tmp_path}: Is a directory")
