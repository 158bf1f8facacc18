"""The published oracle counts on the GPU engine, and match-by-match equality with the CPU
engine on the cheaper queries."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from gpu_helpers import assert_same

from dcsm.engine.cpu import CpuEngine
from dcsm.gpu.engine import GpuEngine
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph

QUERIES = [f"Q_{i}" for i in range(11)]


def _expected(root: Path) -> dict[str, dict[str, int]]:
    with open(root / "oracle-github" / "expected_counts.tsv") as fh:
        return {r["query"]: r for r in csv.DictReader(fh, delimiter="\t")}


@pytest.mark.parametrize(
    "graph,stream,column",
    [("initial90.graph", "insertion10.stream", "positive_insertion10_on_initial90"),
     ("full.graph", "deletion10.stream", "negative_deletion10_on_full")],
)  # fmt: skip
def test_oracle_counts(data_dir: Path, graph: str, stream: str, column: str) -> None:
    root = data_dir / "oracle-github"
    expected = _expected(data_dir)
    eng = GpuEngine()
    eng.load_graph(read_graph(root / graph))
    for q, name in enumerate(QUERIES):
        eng.register(q, read_csm_query(root / "queries" / name), from_seq=0, count_only=True)
    res = eng.apply(read_csm_stream(root / stream))
    eng.close()
    for q, name in enumerate(QUERIES):
        got = int(res.counts.count[res.counts.query == q].sum())
        assert got == int(expected[name][column]), name


@pytest.mark.parametrize("stream,graph", [("insertion10.stream", "initial90.graph"),
                                          ("deletion10.stream", "full.graph")])  # fmt: skip
def test_oracle_embeddings_equal_cpu(data_dir: Path, stream: str, graph: str) -> None:
    root = data_dir / "oracle-github"
    names = ["Q_0", "Q_1", "Q_2", "Q_5", "Q_7", "Q_8", "Q_10"]
    g = read_graph(root / graph)
    s = read_csm_stream(root / stream)
    results = []
    for engine in (GpuEngine(), CpuEngine()):
        engine.load_graph(g)
        for q, name in enumerate(names):
            engine.register(q, read_csm_query(root / "queries" / name), from_seq=0)
        results.append([engine.apply(s)])
        engine.close()
    assert_same(*results)
    assert len(results[0][0].deltas) > 100_000
    np.testing.assert_array_equal(np.unique(results[0][0].deltas.query), np.arange(len(names)))
