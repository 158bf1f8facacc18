"""The enron workloads (DCSM protocol on SNAP email-Enron).

No expected counts are published for these streams, but two independent facts pin them:
``peer_timings.tsv`` lists RapidFlow's positive + negative matches per query, and
static(initial) + positive - negative = static(final) must hold, where the final graph is
computed here with plain Python sets from the files (not by the engine).
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from refdata import shared_data_dir

from dcsm.engine import make_engine
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph
from dcsm.model import Graph, UpdateBatch

pytestmark = pytest.mark.shared

# Queries whose static counts are cheap (a second or less); the others are only checked
# against the peer's positive + negative.
IDENTITY_QUERIES = ["Q1_triangle", "Q3_tailed_triangle", "Q4_diamond", "Q5_4clique", "Q9_5clique"]


@cache
def _workload(root: Path) -> tuple[Graph, UpdateBatch]:
    return read_graph(root / "initial.graph"), read_csm_stream(root / "stream.updates")


def _peer(root: Path) -> dict[str, int]:
    with open(root / "peer_timings.tsv", newline="") as fh:
        return {r["query"]: int(r["matches_positive_plus_negative"])
                for r in csv.DictReader(fh, delimiter="\t")}  # fmt: skip


def _labeled5_queries() -> list[str]:
    root = shared_data_dir()
    if root is None:
        return [f"Q{i}" for i in range(1, 10)]
    return sorted(_peer(root / "enron" / "labeled5"))


def _replay(graph: Graph, stream: UpdateBatch, query: Path) -> tuple[int, int, np.ndarray]:
    engine = make_engine("cpu")
    engine.load_graph(graph)
    engine.register(0, read_csm_query(query), from_seq=0, count_only=True)
    pos = neg = 0
    outcomes = []
    for i in range(0, len(stream), 16384):
        r = engine.apply(stream.slice(i, i + 16384))
        pos += int(r.counts.count[r.counts.sign > 0].sum())
        neg += int(r.counts.count[r.counts.sign < 0].sum())
        outcomes.append(r.outcome)
    engine.close()
    return pos, neg, np.concatenate(outcomes)


def _final_graph(graph: Graph, stream: UpdateBatch) -> Graph:
    """initial + stream with Python sets (edges as unordered pairs; all labels 0 here)."""
    edges = {frozenset(e) for e in zip(graph.src.tolist(), graph.dst.tolist(), strict=True)}
    for op, u, v in zip(stream.op.tolist(), stream.u.tolist(), stream.v.tolist(), strict=True):
        (edges.add if op > 0 else edges.discard)(frozenset((u, v)))
    pairs = np.array([sorted(e) for e in edges], np.int64)
    return Graph(graph.vertex_ids, graph.vertex_labels, pairs[:, 0], pairs[:, 1],
                 np.zeros(len(pairs), np.int32))  # fmt: skip


@pytest.mark.parametrize("query", _labeled5_queries())
def test_labeled5_matches_equal_peer(shared_data: Path, query: str) -> None:
    root = shared_data / "enron" / "labeled5"
    graph, stream = _workload(root)
    pos, neg, outcomes = _replay(graph, stream, root / "queries" / query)
    assert pos + neg == _peer(root)[query]
    assert (outcomes == 0).all()  # the protocol only inserts new and deletes present edges


def test_unlabeled_triangles_equal_peer(shared_data: Path) -> None:
    root = shared_data / "enron" / "unlabeled"
    graph, stream = _workload(root)
    pos, neg, _ = _replay(graph, stream, root / "queries" / "Q1_triangle")
    assert pos + neg == _peer(root)["Q1_triangle"]


@pytest.mark.parametrize("query", IDENTITY_QUERIES)
def test_labeled5_static_plus_deltas_is_final_static(shared_data: Path, query: str) -> None:
    root = shared_data / "enron" / "labeled5"
    graph, stream = _workload(root)
    pattern = read_csm_query(root / "queries" / query)
    pos, neg, _ = _replay(graph, stream, root / "queries" / query)
    before, after = make_engine("cpu"), make_engine("cpu")
    before.load_graph(graph)
    after.load_graph(_final_graph(graph, stream))
    assert before.count_static(pattern) + pos - neg == after.count_static(pattern)
    assert pos > 0 and neg > 0
