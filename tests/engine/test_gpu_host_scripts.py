"""The GPU engine's host-side cost scripts, run as scripts without a GPU on small inputs:
bench/debug/host_path_cost.py (every step of the host path timed; the script asserts that
the call result holds a count for each update), bench/debug/admit_cost.py (admission
alone; the script checks every update's internal ids), bench/debug/decode_cost.py (the
embeddings decode; the script checks the rows against numpy across a stamp wrap and a ring
wrap), bench/debug/cycle_walk_model.py (a labelled backfill's work by enumeration and by
meeting in the middle, its counts checked), bench/debug/orientation_model.py (the
4-cycle's work in each orientation of an update) and bench/debug/cycle_root_sizes.py (the
ranked cycle count's roots by size, its count checked)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = ("admit", "room", "encode", "bookkeep", "publish", "drain", "result", "total")


def run_script(name: str, *args: str) -> str:
    """Standard output of bench/debug/NAME run with ``args`` (fails on a non-zero exit)."""
    return subprocess.run(
        [sys.executable, "-P", str(ROOT / "bench/debug" / name), *args],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip


def test_host_path_cost_runs_and_times_every_step() -> None:
    out = run_script("host_path_cost.py", "--vertices", "5000", "--updates", "20000",
                     "--piece", "1024", "--repeat", "1")  # fmt: skip
    timed = dict(re.findall(r"^\s+(\w+)\s+([\d.]+)", out, re.MULTILINE))
    assert set(STEPS) <= set(timed), out
    assert float(timed["total"]) > 0 and "updates/s on this host" in out


def test_decode_cost_runs_and_checks_its_rows() -> None:
    out = run_script("decode_cost.py", "--records", "3000000", "--vertices", "2",
                     "--graph-vertices", "1000", "--repeat", "1")  # fmt: skip
    ns = re.search(r"([\d.]+) ns a record", out)
    assert ns is not None and float(ns.group(1)) > 0, out


def test_cycle_walk_model_runs_and_checks_its_counts() -> None:
    """bench/debug/cycle_walk_model.py on a small graph: meeting in the middle against the
    CPU engine's search, the path's exact count against its walks (the script stops if
    either differs), and the cycle counted."""
    out = run_script("cycle_walk_model.py", "--edges", "30000", "--check-edges", "5000",
                     "--count-path", "--count-cycle")  # fmt: skip
    assert re.search(r"check on 5,000 edges: meeting in the middle ([\d,]+), CPU engine \1", out)
    assert "lpath6 counted exactly" in out and "lcycle6 counted exactly" in out
    assert len(re.findall(r"start label \d: levels", out)) == 6


def test_orientation_model_runs_and_the_flip_never_costs_more() -> None:
    """bench/debug/orientation_model.py: the flipped orientation's work is within 1 % of the
    cheaper of the two (the bound of any per-update choice) and no more than the stream's."""
    out = run_script("orientation_model.py", "--edges", "200000", "--sample", "400")
    work = re.search(r"as the stream gives it ([\d,]+), the other way ([\d,]+), flipped "
                     r"([\d,]+), the cheaper of the two ([\d,]+)", out)  # fmt: skip
    assert work is not None, out
    given, other, flipped, best = (int(w.replace(",", "")) for w in work.groups())
    assert best <= flipped <= min(given, other) and flipped <= 1.01 * best, out
    assert "of the tests" in out


def test_cycle_root_sizes_checks_its_count_and_adds_up() -> None:
    """bench/debug/cycle_root_sizes.py on a small graph: its walk counts what the CPU engine
    counts (the script stops otherwise), and the shares of roots and entries grow with the
    table size, to at most all of them."""
    out = run_script("cycle_root_sizes.py", "--edges", "60000")
    assert re.search(r"the labelled 6-cycle: [\d,]+ roots, [\d,]+ walked, [\d,]+ entries", out)
    roots = [float(x) for x in re.findall(r"([\d.]+)% of the walked roots", out)]
    entries = [float(x) for x in re.findall(r"([\d.]+)% of the entries", out)]
    assert len(roots) == len(entries) == 8, out
    for shares in (roots, entries):
        assert shares == sorted(shares) and shares[-1] <= 100.0


def test_admit_cost_runs_and_checks_the_ids() -> None:
    out = run_script("admit_cost.py", "--vertices", "5000", "--updates", "20000", "--repeat", "2")
    assert re.fullmatch(r"admit: [0-9.]+ ns an update \(5,000 vertices, no dense window\)\n", out)
