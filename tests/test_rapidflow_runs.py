"""bench/rapidflow.py, which runs RapidFlow beside the benchmarks' rows: repeated runs of a
light row and their median, a run that times out or fails, runs that disagree. A stand-in
script prints what RapidFlow prints, one planned run a line (no GPU, no RapidFlow needed);
with ``DCSM_RAPIDFLOW`` set to a RapidFlow binary you built, the last test runs the real
one on a small graph and checks its count against the CPU engine's."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from helpers import bench_script

# What RapidFlow prints at the end of a run (its streaming_engine.cpp), in the stand-in's
# words: search seconds, result count, and "Time out..." when its limit stopped it.
STAND_IN = """#!/bin/sh
n=$(cat "$RF_STATE" 2>/dev/null || echo 0)
echo $((n + 1)) > "$RF_STATE"
set -- $(sed -n "$((n + 1))p" "$RF_PLAN")
[ "$1" = fail ] && { echo "cannot read the graph" >&2; exit 3; }
echo "Search time (seconds): $1"
echo "Result count: $2"
[ "${3:-}" = timeout ] && echo "Time out..."
echo "Done."
"""


@pytest.fixture
def planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A stand-in RapidFlow whose k-th run prints line k of the plan written by the test;
    returns (binary, plan writer, runs made so far)."""
    binary = tmp_path / "RapidFlow.out"
    binary.write_text(STAND_IN)
    binary.chmod(0o755)
    plan, state = tmp_path / "plan", tmp_path / "state"
    monkeypatch.setenv("RF_PLAN", str(plan))
    monkeypatch.setenv("RF_STATE", str(state))

    def write(*lines: str) -> None:
        plan.write_text("\n".join(lines) + "\n")
        state.unlink(missing_ok=True)

    def runs() -> int:
        return int(state.read_text()) if state.exists() else 0

    return binary, write, runs


def _row(rf, name: str = "q") -> dict:  # type: ignore[no-untyped-def]
    return rf.run(Path("g"), Path(name), Path("s"))


def test_a_light_row_is_the_median_of_its_runs(planned) -> None:  # type: ignore[no-untyped-def]
    binary, write, runs = planned
    rapidflow = bench_script("rapidflow")
    write("0.0030 600", "0.0012 600", "0.0019 600", "0.0050 600", "0.0011 600")
    rf = rapidflow.RapidFlow(binary, 15, repeat=5)
    row = _row(rf)
    assert row["seconds_each"] == [0.003, 0.0012, 0.0019, 0.005, 0.0011]
    assert row["seconds"] == 0.0019 and row["matches"] == 600 and row["failed"] is None
    assert runs() == 5
    assert _row(rf) is row and runs() == 5  # asked again (the "all at once" row): reused
    fields = rf.fields(Path("g"), Path("q"), Path("s"), 600)
    assert fields["rapidflow_same_host_s"] == 0.0019
    assert fields["rapidflow_same_host_each_s"] == row["seconds_each"]
    assert fields["rapidflow_counts_equal"] is True
    assert rf.fields(Path("g"), Path("q"), Path("s"), 601)["rapidflow_counts_equal"] is False


def test_a_heavy_row_runs_once(planned) -> None:  # type: ignore[no-untyped-def]
    binary, write, runs = planned
    rapidflow = bench_script("rapidflow")
    write(f"{rapidflow.REPEAT_BELOW_S + 1.5} 900", "0.5 900")
    row = _row(rapidflow.RapidFlow(binary, 15, repeat=5))
    assert row["seconds"] == rapidflow.REPEAT_BELOW_S + 1.5 and runs() == 1


def test_a_run_that_times_out_ends_the_row_as_timed_out(planned) -> None:  # type: ignore[no-untyped-def]
    binary, write, runs = planned
    rapidflow = bench_script("rapidflow")
    write("0.2 50", "15.0 48 timeout", "0.2 50")
    row = _row(rapidflow.RapidFlow(binary, 15, repeat=3))
    assert row["timed_out"] and row["seconds"] is None and row["matches"] == 48
    assert row["seconds_each"] == [0.2, None] and runs() == 2
    write("15.0 48 timeout")
    fields = rapidflow.RapidFlow(binary, 15).fields(Path("g"), Path("q"), Path("s"), 48)
    assert fields["rapidflow_counts_equal"] is None  # a partial count is never compared
    assert fields["rapidflow_timed_out"] and fields["rapidflow_same_host_s"] is None


def test_runs_that_count_differently_fail_the_row(planned) -> None:  # type: ignore[no-untyped-def]
    binary, write, _runs = planned
    rapidflow = bench_script("rapidflow")
    write("0.2 50", "0.2 51")
    row = _row(rapidflow.RapidFlow(binary, 15, repeat=2))
    assert row["seconds"] is None and "counted differently: [50, 51]" in row["failed"]


def test_a_run_that_fails_says_why(planned) -> None:  # type: ignore[no-untyped-def]
    binary, write, _runs = planned
    rapidflow = bench_script("rapidflow")
    write("fail")
    row = _row(rapidflow.RapidFlow(binary, 15, repeat=3))
    assert row["seconds"] is None and not row["timed_out"]
    assert row["failed"].startswith("exit 3") and "cannot read the graph" in row["failed"]


@pytest.mark.skipif(
    not os.environ.get("DCSM_RAPIDFLOW"),
    reason="DCSM_RAPIDFLOW names no RapidFlow binary (build it from github "
    "shixuansun/RapidFlow outside the repository)",
)
def test_the_real_rapidflow_counts_as_the_cpu_engine(tmp_path: Path) -> None:
    from dcsm.engine.cpu import CpuEngine
    from dcsm.graphio import write_csm_graph, write_csm_query, write_csm_stream
    from dcsm.loadgen.gen_stream import chunglu_graph
    from dcsm.model import Graph, Pattern, UpdateBatch

    rapidflow = bench_script("rapidflow")
    g = chunglu_graph(3000, 400, gamma=2.3, seed=3)
    keep = np.arange(len(g.src)) < 2700
    initial = Graph(g.vertex_ids, g.vertex_labels, g.src[keep], g.dst[keep], g.edge_labels[keep])
    stream = UpdateBatch.from_arrays(np.ones((~keep).sum(), np.int8), g.src[~keep], g.dst[~keep],
                                     g.edge_labels[~keep])  # fmt: skip
    zero = np.zeros(3, np.int32)
    triangle = Pattern("triangle", zero, np.array([[0, 1], [1, 2], [0, 2]]), zero)
    write_csm_graph(tmp_path / "g.graph", initial)
    write_csm_stream(tmp_path / "s.stream", stream)
    write_csm_query(tmp_path / "q.query", triangle)
    cpu = CpuEngine()
    cpu.load_graph(initial)
    cpu.register(0, triangle, from_seq=0, count_only=True)
    want = int(cpu.apply(stream).counts.count.sum())
    rf = rapidflow.RapidFlow(Path(os.environ["DCSM_RAPIDFLOW"]), 30, repeat=3)
    fields = rf.fields(tmp_path / "g.graph", tmp_path / "q.query", tmp_path / "s.stream", want)
    assert fields["rapidflow_counts_equal"] is True, fields
    assert len(fields["rapidflow_same_host_each_s"]) == 3  # a light row: every run made
    assert want > 0
