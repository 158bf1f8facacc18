"""The binary graph format and the vectorised Chung-Lu generator (issue 17, items 2 and 4)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dcsm.errors import InputFileError
from dcsm.graphio import GRAPH_FORMAT, read_graph, write_binary_graph, write_csm_graph
from dcsm.loadgen.gen_stream import WorkloadError, chunglu_graph
from dcsm.model import Graph


def edge_set(g: Graph) -> set[tuple[int, int, int]]:
    lo, hi = np.minimum(g.src, g.dst), np.maximum(g.src, g.dst)
    return set(zip(lo.tolist(), hi.tolist(), g.edge_labels.tolist(), strict=True))


def test_binary_and_text_read_back_the_same_graph(tmp_path) -> None:
    g = chunglu_graph(5000, labels=3, edge_labels=2, seed=4)
    write_binary_graph(tmp_path / "g.npz", g)
    write_csm_graph(tmp_path / "g.csm", g)
    a, b = read_graph(tmp_path / "g.npz"), read_graph(tmp_path / "g.csm")
    assert edge_set(a) == edge_set(b) == edge_set(g)
    assert dict(zip(a.vertex_ids.tolist(), a.vertex_labels.tolist(), strict=True)) == dict(
        zip(b.vertex_ids.tolist(), b.vertex_labels.tolist(), strict=True)
    )


def test_chunglu_is_exact_seeded_and_simple() -> None:
    g = chunglu_graph(20_000, seed=9)
    assert g.num_edges == 20_000 and g.num_vertices == 20_000 // 9
    assert not np.any(g.src == g.dst)
    assert len(edge_set(g)) == 20_000
    again = chunglu_graph(20_000, seed=9)
    assert np.array_equal(g.src, again.src) and np.array_equal(g.dst, again.dst)
    deg = np.bincount(np.concatenate([g.src, g.dst]))
    assert deg.max() > 20 * deg.mean()  # a power law has hubs
    with pytest.raises(WorkloadError):
        chunglu_graph(100, vertices=5)


def bad(tmp_path, **cols: np.ndarray) -> str:
    base = {
        "format": np.array(GRAPH_FORMAT), "vertex_ids": np.array([1, 2, 3]),
        "vertex_labels": np.zeros(3, np.int32), "src": np.array([1, 2]),
        "dst": np.array([2, 3]), "edge_labels": np.zeros(2, np.int32),
    }  # fmt: skip
    base.update(cols)
    path = tmp_path / "bad.npz"
    with open(path, "wb") as fh:
        np.savez(fh, **base)
    with pytest.raises(InputFileError) as err:
        read_graph(path)
    return str(err.value)


def test_binary_graphs_are_validated(tmp_path) -> None:
    assert "self loop on vertex 2" in bad(tmp_path, dst=np.array([2, 2]), src=np.array([1, 2]))
    assert "undeclared vertex 9" in bad(tmp_path, dst=np.array([2, 9]))
    assert "listed twice" in bad(tmp_path, src=np.array([1, 2]), dst=np.array([2, 1]))
    assert "declared twice" in bad(tmp_path, vertex_ids=np.array([1, 2, 2]))
    assert "not a dcsm-graph/1" in bad(tmp_path, format=np.array("other"))
    assert "lengths differ" in bad(tmp_path, edge_labels=np.zeros(3, np.int32))


def test_gen_graph_writes_the_binary_format(tmp_path) -> None:
    out = tmp_path / "g.npz"
    cmd = [sys.executable, "-m", "dcsm.cli", "gen-graph", "--model", "chung-lu", "--edges",
           "3000", "--labels", "2", "--out", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "3,000 edges" in r.stdout
    assert read_graph(out).num_edges == 3000
