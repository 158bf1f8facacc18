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
