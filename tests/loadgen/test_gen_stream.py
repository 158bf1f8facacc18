"""Workload generation: the DCSM protocol's properties, checked on the files ``dcsm
gen-stream`` writes (parsed here with plain Python), and the synthetic power-law graphs."""

from __future__ import annotations

import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

from dcsm.cli import main
from dcsm.graphio import read_csm_stream
from dcsm.loadgen.gen_stream import dcsm_workload, powerlaw_graph

Pair = frozenset[int]


def parse(path: Path) -> tuple[dict[int, int], list[tuple[str, Pair]], list[list[str]]]:
    """(vertex labels, [(kind, pair)], raw token rows) of a CSM graph or stream file."""
    labels: dict[int, int] = {}
    items: list[tuple[str, Pair]] = []
    rows = []
    for line in path.read_text().splitlines():
        t = line.split()
        rows.append(t)
        if t[0] == "v":
            labels[int(t[1])] = int(t[2])
        else:
            items.append((t[0], frozenset((int(t[1]), int(t[2])))))
    return labels, items, rows


def gen(tmp: Path, graph: Path, name: str, *extra: str) -> Path:
    out = tmp / name
    assert main(["gen-stream", "--graph", str(graph), "--out", str(out), *extra]) == 0
    return out


@pytest.fixture(scope="module")
def full_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gen") / "full.graph"
    assert (
        main(
            [
                "gen-graph",
                "--vertices",
                "3000",
                "--edges-per-vertex",
                "3",
                "--seed",
                "1",
                "--out",
                str(path),
            ]
        )
        == 0
    )
    return path


def test_protocol(tmp_path: Path, full_graph: Path) -> None:
    _, full_items, _ = parse(full_graph)
    full = {p for _, p in full_items}
    ne = len(full)
    out = gen(tmp_path, full_graph, "w", "--seed", "3")
    labels, initial_items, _ = parse(out / "initial.graph")
    _, stream, _ = parse(out / "stream.updates")
    initial = {p for _, p in initial_items}
    inserted = [p for k, p in stream if k == "e"]
    deleted = [p for k, p in stream if k == "-e"]
    # 45% of |E| arrive as insertions, 5% of |E| are deleted.
    assert len(inserted) == math.floor(0.45 * ne) and len(deleted) == math.floor(0.05 * ne)
    # Held-out edges and initial edges partition the graph; nothing repeats.
    assert len(set(inserted)) == len(inserted) and len(initial) == len(initial_items)
    assert initial | set(inserted) == full and not initial & set(inserted)
    # Deletions hit edges of the initial graph, each once, never a streamed edge.
    assert len(set(deleted)) == len(deleted) and set(deleted) <= initial
    # Every vertex is declared up front.
    assert sorted(labels) == list(range(3000))
    # Interleaved: deletion positions spread over the stream like a uniform sample.
    pos = np.array([i for i, (k, _) in enumerate(stream) if k == "-e"]) / len(stream)
    assert pos.min() < 0.1 and pos.max() > 0.9 and abs(pos.mean() - 0.5) < 0.05


def test_determinism_and_independent_streams(tmp_path: Path, full_graph: Path) -> None:
    a = gen(tmp_path, full_graph, "a", "--seed", "11")
    b = gen(tmp_path, full_graph, "b", "--seed", "11")
    c = gen(tmp_path, full_graph, "c", "--seed", "12")
    for f in ("initial.graph", "stream.updates"):
        assert (a / f).read_bytes() == (b / f).read_bytes()
    assert (a / "stream.updates").read_bytes() != (c / "stream.updates").read_bytes()
    # Labels and timestamps change neither the split nor the order of the stream.
    d = gen(tmp_path, full_graph, "d", "--seed", "11", "--labels", "5", "--rate", "2000")
    _, sa, _ = parse(a / "stream.updates")
    _, sd, rows = parse(d / "stream.updates")
    assert sa == sd
    la, _, _ = parse(a / "initial.graph")
    ld, _, _ = parse(d / "initial.graph")
    assert set(la.values()) == {0} and set(ld.values()) == set(range(5))
    counts = np.bincount(list(ld.values()))
    assert counts.min() > 0.8 * len(ld) / 5  # roughly uniform
    # Timestamps: a 5th column, non-decreasing, exponential gaps at the rate.
    ts = np.array([float(t[4]) for t in rows])
    gaps = np.diff(np.concatenate([[0.0], ts]))
    assert (gaps >= 0).all()
    assert abs(gaps.mean() - 1 / 2000) < 0.05 / 2000
    assert abs(np.median(gaps) - math.log(2) / 2000) < 0.1 / 2000  # exponential, not uniform
    np.testing.assert_allclose(read_csm_stream(d / "stream.updates").ts, ts)


def test_custom_fractions_and_snap_input(tmp_path: Path) -> None:
    snap = tmp_path / "g.txt"
    g = nx.gnm_random_graph(200, 1000, seed=4)
    snap.write_text("".join(f"{u}\t{v}\n{v}\t{u}\n" for u, v in g.edges))  # both directions
    out = gen(tmp_path, snap, "w", "--insert-fraction", "0.2", "--delete-fraction", "0.3")
    _, stream, _ = parse(out / "stream.updates")
    assert sum(k == "e" for k, _ in stream) == 200 and sum(k == "-e" for k, _ in stream) == 300
    # Everything may go: all edges inserted, none left to delete.
    out = gen(tmp_path, snap, "all", "--insert-fraction", "1", "--delete-fraction", "0")
    _, initial, _ = parse(out / "initial.graph")
    _, stream, _ = parse(out / "stream.updates")
    assert initial == [] and len(stream) == 1000


def test_workload_api_keeps_edge_labels() -> None:
    graph = powerlaw_graph(200, 2, seed=3)
    graph = type(graph)(
        graph.vertex_ids,
        graph.vertex_labels,
        graph.src,
        graph.dst,
        (graph.src % 3).astype(np.int32),
    )
    work = dcsm_workload(graph, seed=1)
    label_of = {
        frozenset(p): lab
        for *p, lab in zip(
            graph.src.tolist(), graph.dst.tolist(), graph.edge_labels.tolist(), strict=True
        )
    }
    s = work.stream
    for u, v, lab in zip(s.u.tolist(), s.v.tolist(), s.label.tolist(), strict=True):
        assert label_of[frozenset((u, v))] == lab
    assert (s.ts == 0).all()


def test_powerlaw_graph() -> None:
    g = powerlaw_graph(5000, 4, triangle_prob=0.5, labels=3, seed=9)
    again = powerlaw_graph(5000, 4, triangle_prob=0.5, labels=3, seed=9)
    for f in ("vertex_ids", "vertex_labels", "src", "dst", "edge_labels"):
        np.testing.assert_array_equal(getattr(g, f), getattr(again, f))
    assert g.num_edges == (5000 - 4) * 4
    x = nx.Graph()
    x.add_edges_from(zip(g.src.tolist(), g.dst.tolist(), strict=True))
    assert x.number_of_edges() == g.num_edges and nx.number_of_selfloops(x) == 0
    assert nx.is_connected(x)
    degrees = np.array([d for _, d in x.degree()])
    assert degrees.min() >= 4 and degrees.max() > 20 * np.median(degrees)  # heavy tail
    # Triad formation closes triangles: far more than a random graph of the same density.
    assert sum(nx.triangles(x).values()) // 3 > 2000
    assert set(g.vertex_labels.tolist()) == {0, 1, 2}
    no_triads = powerlaw_graph(5000, 4, triangle_prob=0.0, seed=9)
    y = nx.Graph(list(zip(no_triads.src.tolist(), no_triads.dst.tolist(), strict=True)))
    assert sum(nx.triangles(y).values()) < sum(nx.triangles(x).values()) / 3


@pytest.mark.shared
def test_enron_split_has_the_shared_workload_sizes(tmp_path: Path, shared_data: Path) -> None:
    """email-Enron through gen-stream gives the sizes of the shared DCSM-protocol workload
    (its initial graph and stream were made by the same protocol)."""
    out = gen(tmp_path, shared_data / "enron" / "email-Enron.txt", "e", "--seed", "1")
    _, initial, _ = parse(out / "initial.graph")
    _, stream, _ = parse(out / "stream.updates")
    ref_initial = sum(
        1 for line in open(shared_data / "enron/unlabeled/initial.graph") if line[0] == "e"
    )
    ref = [line.split()[0] for line in open(shared_data / "enron/unlabeled/stream.updates")]
    assert len(initial) == ref_initial == 101_108
    assert sum(k == "e" for k, _ in stream) == ref.count("e")
    assert sum(k == "-e" for k, _ in stream) == ref.count("-e")
