"""bench/static_bench.py's converters to the input formats of gMatch and EGSM (read back as
their sources read them), the parsers of their output, and the side-by-side loop with
stand-in peers (shell scripts printing what the real ones print). No GPU needed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import bench_script

from dcsm.model import ANY_LABEL, Graph, Pattern


def _tiny() -> Graph:
    """External ids 70, 5, 12, 40, 9 (9 isolated): triangle 5-12-40 with a tail 40-70."""
    return Graph(
        vertex_ids=np.array([70, 5, 12, 40, 9], np.int64),
        vertex_labels=np.array([3, 1, 1, 2, 0], np.int32),
        src=np.array([12, 5, 40, 70], np.int64),
        dst=np.array([5, 40, 12, 40], np.int64),
        edge_labels=np.zeros(4, np.int32),
    )


def test_text_graph_round_trip(tmp_path: Path) -> None:
    sb = bench_script("static_bench")
    g = sb.compact(_tiny())
    # ascending external id: 5->0, 9->1, 12->2, 40->3, 70->4
    assert g.labels.tolist() == [1, 0, 1, 2, 3]
    sb.write_tve_graph(tmp_path / "g", g)
    text = (tmp_path / "g").read_text()
    assert text.splitlines()[:2] == ["t 5 4", "v 0 1 2"]
    labels, deg, edges = sb.read_tve(tmp_path / "g")
    assert labels.tolist() == [1, 0, 1, 2, 3]
    assert deg.tolist() == [2, 0, 2, 3, 1]
    assert sorted(map(tuple, edges.tolist())) == [(0, 2), (0, 3), (2, 3), (3, 4)]


def test_query_round_trip(tmp_path: Path) -> None:
    sb = bench_script("static_bench")
    p = Pattern.build("q", [4, 0, 7, 0], [(0, 1, 0), (1, 2, 0), (2, 3, 0), (3, 0, 0), (0, 2, 0)])
    sb.write_tve_query(tmp_path / "q", p)
    labels, deg, edges = sb.read_tve(tmp_path / "q")
    assert labels.tolist() == [4, 0, 7, 0]
    assert deg.tolist() == [3, 2, 3, 2]
    assert sorted(map(tuple, edges.tolist())) == sorted(map(tuple, p.edges.tolist()))


def test_gmatch_csr(tmp_path: Path) -> None:
    sb = bench_script("static_bench")
    g = sb.compact(_tiny())
    sb.write_gmatch_csr(tmp_path / "g.bin", g)
    off, labels, nbr = sb.read_gmatch_csr(tmp_path / "g.bin")
    assert off.tolist() == [0, 2, 2, 4, 7, 8]
    assert labels.tolist() == [1, 0, 1, 2, 3]
    assert nbr.tolist() == [2, 3, 0, 3, 0, 2, 4, 3]  # each row ascending


def test_ascii_rows_matches_printf() -> None:
    sb = bench_script("static_bench")
    rng = np.random.default_rng(0)
    a = np.concatenate([[0, 9, 10, 99, 100, 2**31 - 1, 10**12], rng.integers(0, 10**9, 500)])
    b = rng.integers(0, 1000, len(a))
    want = "".join(f"e {x} {y}\n" for x, y in zip(a.tolist(), b.tolist(), strict=True))
    assert sb.ascii_rows("e", [a, b]).decode() == want
    assert sb.ascii_rows("v", [np.zeros(0, np.int64)]) == b""
    with pytest.raises(ValueError):
        sb.ascii_rows("e", [np.array([-1])])


def test_parsers() -> None:
    sb = bench_script("static_bench")
    gmatch = (
        "# Transfer time of the data graph, time (ms): 41(host), 40(kernel)\n"
        "# BFS Finished, time (ms): 2(host), 2(kernel)\n"
        "# Processing, time (ms): 3(host), 3(kernel)\n"
        "# Processing, time (ms): 1234(host), 1230(kernel)\n"
        "\033[41;37m\nResult: 6120\n\033[0m\nunique count: 255\n"
    )
    assert sb.parse_gmatch(gmatch) == {
        "count": 6120,
        "unique": 255,
        "seconds": 1.234,
        "prep_s": 0.041,
    }
    bitmap = "# Preparation, time (ms): 7(host), 6(kernel)\n" + gmatch.split("\n", 1)[1]
    assert sb.parse_gmatch(bitmap)["prep_s"] == 0.007
    egsm = (
        "Build Cuckoo Tries, time (ms): 10(host), 9(kernel)\n"
        "Filtering, time (ms): 5(host), 5(kernel)\n"
        "Finish group 0, time (ms): 1(host), 1(kernel)\n\n"
        "Total join time (ms): 250(host) 249(kernel)\n"
        "# Matches: 48472\nEnd.\n"
    )
    assert sb.parse_egsm(egsm) == {"count": 48472, "unique": None, "seconds": 0.25, "prep_s": 0.015}
    assert sb.parse_egsm("Killed")["count"] is None


def test_peer_support() -> None:
    sb = bench_script("static_bench")
    g = sb.compact(_tiny())
    tri = Pattern.build("t", [1, 1, 2], [(0, 1, 0), (1, 2, 0), (0, 2, 0)])
    assert sb.peer_support(tri, g) is None
    assert not sb.one_label(tri, g)
    wild = Pattern.build("w", [1, None, 2], [(0, 1, 0), (1, 2, 0), (0, 2, 0)])
    assert sb.peer_support(wild, g) == "wildcard vertex label"
    lab = Pattern.build("l", [1, 1, 2], [(0, 1, 3), (1, 2, 0), (0, 2, 0)])
    assert sb.peer_support(lab, g) == "edge labels"
    anye = Pattern.build("a", [1, 1, 2], [(0, 1, None), (1, 2, None), (0, 2, None)])
    assert anye.elabels.tolist() == [ANY_LABEL] * 3
    assert sb.peer_support(anye, g) is None


def _fake(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def test_side_by_side_with_stand_ins(tmp_path: Path) -> None:
    """Triangle on the tiny graph (unlabelled copy): 6 embeddings, |Aut| 6. The gMatch
    stand-in agrees (and is handed gMatch's CSR), the EGSM one is off by one; a sleeping
    one is recorded as timed out, never with a time."""
    sb = bench_script("static_bench")
    gfile = tmp_path / "g.graph"
    gfile.write_text("v 5 0\nv 12 0\nv 40 0\nv 70 0\ne 5 12 0\ne 12 40 0\ne 40 5 0\ne 40 70 0\n")
    qfile = tmp_path / "tri"
    qfile.write_text("v 0 0\nv 1 0\nv 2 0\ne 0 1 0\ne 1 2 0\ne 0 2 0\n")
    gm = _fake(
        tmp_path / "gm",
        'case "$2" in *.bin) ;; *) exit 3 ;; esac\n'
        'echo "# Processing, time (ms): 2(host), 2(kernel)"; echo "Result: 6"; '
        'echo "unique count: 1"',
    )
    eg = _fake(
        tmp_path / "eg", 'echo "Total join time (ms): 0(host) 0(kernel)"; echo "# Matches: 7"'
    )
    out = tmp_path / "rows.json"
    common = ["--graph", str(gfile), "--query", str(qfile), "--no-gpu", "--repeat", "1"]
    rc = sb.main([*common, "--out", str(out), "--gmatch-unlabeled", str(gm), "--egsm", str(eg)])
    assert rc == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert (row["count"], row["automorphisms"], row["distinct"]) == (6, 6, 1)
    assert row["gmatch_status"] == "agrees" and row["gmatch_s"] == 0.002
    assert row["egsm_status"] == "DISAGREES" and row["egsm_count"] == 7
    assert row["faster_peer"] == "gmatch"  # a disagreeing peer is no reference
    assert "DISAGREE" in out.with_suffix(".md").read_text()

    slow = _fake(tmp_path / "slow", "sleep 30")
    rc = sb.main([*common, "--out", str(out), "--egsm", str(slow), "--peer-limit", "0.5"])
    assert rc == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["egsm_status"].startswith("timed out") and row["egsm_s"] is None


def test_no_gpu_without_cupy_fails_clearly(tmp_path: Path) -> None:
    sb = bench_script("static_bench")
    try:
        import cupy  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("CuPy is installed here")
    gfile = tmp_path / "g.graph"
    gfile.write_text("v 0 0\nv 1 0\ne 0 1 0\n")
    with pytest.raises(SystemExit, match="pass --no-gpu"):
        sb.main(["--graph", str(gfile), "--out", str(tmp_path / "o.json")])
