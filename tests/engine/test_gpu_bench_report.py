"""bench/gpu_bench.py's search report, without a GPU: a timed apply that drained to look at
the engine's pools, compacted or grew them is named under the table (call 1 of session 18
had one light row at 4x the others' time, with nothing to tell why)."""

from __future__ import annotations

from pathlib import Path

from helpers import bench_script


def test_pool_events_name_what_an_apply_changed() -> None:
    gb = bench_script("gpu_bench")
    before = {"pool_looks": 3, "pool_compactions": 0, "pool_slabs": 1024, "max_versions": 64,
              "max_vertices": 16, "gc_ptr": 5}  # fmt: skip
    assert gb.pool_events(before, dict(before, gc_ptr=9)) == ""  # progress is no event
    after = dict(before, pool_looks=4, pool_slabs=2048)
    assert gb.pool_events(before, after) == "pool_looks 3->4, pool_slabs 1024->2048"


def test_the_report_lists_the_rows_with_pool_events(tmp_path: Path) -> None:
    gb = bench_script("gpu_bench")
    report = gb.Report(tmp_path, 15)
    row = dict(dataset="oracle-github", stream="deletion10", mode="count", matches=660,
               seconds=0.0187, peer_matches=660, rapidflow_published_s=0.0011)  # fmt: skip
    report.add(query="Q_0", pool_events="", **row)
    report.add(query="Q_1", pool_events="pool_looks 1->2", **row)
    text = (tmp_path / "gpu_bench.md").read_text()
    assert "- oracle-github Q_1 deletion10 count: pool_looks 1->2" in text
    assert "Q_0 deletion10 count:" not in text


def test_a_row_is_the_median_of_its_repeated_applies(tmp_path: Path) -> None:
    """--repeat: each timed apply is undone before the next, so every repetition counts the
    same matches on the same graph, and the row's seconds are the median of them (the CPU
    engine stands in for the GPU one; the bench only times and counts)."""
    import numpy as np

    from dcsm.engine.cpu import CpuEngine
    from dcsm.model import Graph, UpdateBatch

    class Engine(CpuEngine):
        def stats(self) -> dict[str, int]:  # the pool counters a GpuEngine has
            return {}

    gb = bench_script("gpu_bench")
    # A wheel: hub 0 joined to a ring 1..6; the stream closes the ring's chords 1-3 and 4-6.
    ring = np.arange(1, 7)
    g = Graph(vertex_ids=np.arange(7), vertex_labels=np.zeros(7, np.int32),
              src=np.r_[np.zeros(6, np.int64), ring], dst=np.r_[ring, np.roll(ring, -1)],
              edge_labels=np.zeros(12, np.int32))  # fmt: skip
    query = tmp_path / "triangle"
    query.write_text("v 0 0\nv 1 0\nv 2 0\ne 0 1 0\ne 1 2 0\ne 0 2 0\n")
    run = object.__new__(gb.Runner)
    run.stream = UpdateBatch.from_arrays(np.ones(2), np.array([1, 4]), np.array([3, 6]))
    run.engine, run.seq, run.qid = Engine(), 0, 0
    run.engine.load_graph(g)
    seconds, each, pos, neg, events, faults = run.time_query(query, True, repeat=3)
    assert len(each) == len(faults) == 3 and seconds == float(np.median(each))
    # Beside each timed apply: the host thread's core, and how fast it ran Python then.
    assert len(run.cpus) == len(run.python_us) == 3 and min(run.python_us) > 0
    # Chord 1-3 closes triangles with 2 and with the hub: 2 x 6 embeddings; 4-6 likewise.
    assert (pos, neg, events) == (24, 0, "")
    assert run.time_once(query, True)[1:3] == (24, 0)


def test_compare_turns_keeps_the_fast_mode_when_asked(tmp_path: Path) -> None:
    """--python-below: a variant's median over only the runs whose row found the host's core
    fast; the total sums the rows that every variant still has."""
    import json
    import subprocess
    import sys

    def run(name: str, rows: list[tuple[str, float, list[float] | None]]) -> None:
        (tmp_path / name).mkdir()
        search = [dict(query=q, stream="deletion10", mode="count", seconds=ms / 1e3,
                       **({"host_python_us_each": us} if us else {}))
                  for q, ms, us in rows]  # fmt: skip
        (tmp_path / name / "gpu_bench.json").write_text(json.dumps({"search": search}))

    run("m1", [("Q_1", 1.2, [900, 950]), ("Q_5", 1.3, [900])])
    run("m2", [("Q_1", 1.7, [1600, 1700]), ("Q_5", 1.8, [1650])])  # the slow mode
    run("b1", [("Q_1", 1.1, [1000]), ("Q_5", 1.9, [1500])])
    run("b2", [("Q_1", 1.3, None), ("Q_5", 1.2, [990])])  # Q_1 did not record its speed
    script = Path(__file__).resolve().parents[2] / "bench" / "debug" / "compare_turns.py"

    def table(*flags: str) -> list[str]:
        out = subprocess.run([sys.executable, str(script), *flags, str(tmp_path), "m1", "b1", "m2",
                              "b2"], capture_output=True, text=True, check=True).stdout  # fmt: skip
        return out.splitlines()

    every = table()
    assert "| Q_1 | deletion10 | count | 1.20 | 1.45 |" in every  # b, then m: all runs
    assert every[-1] == "| total | | | 2.75 | 3.00 |"
    fast = table("--python-below", "1200")
    assert "| Q_1 | deletion10 | count | 1.10 (1) | 1.20 (1) |" in fast
    assert "| Q_5 | deletion10 | count | 1.20 (1) | 1.30 (1) |" in fast
    assert fast[-1] == "| total | | | 2.30 | 2.50 |"
    assert table("--python-below", "995")[-1].startswith("| total (1 of 2 rows")
