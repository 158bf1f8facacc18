"""bench/debug/host_path_cost.py, the GPU engine's host path timed without a GPU, run as a
script on a small stream: every step is timed and the drain reads every completion (the
script asserts that the call result holds a count for each update)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = ("admit", "sent", "encode", "controls", "ring", "bookkeep", "drain", "result", "total")


def test_host_path_cost_runs_and_times_every_step() -> None:
    out = subprocess.run(
        [sys.executable, "-P", str(ROOT / "bench/debug/host_path_cost.py"), "--vertices", "5000",
         "--updates", "20000", "--piece", "1024", "--repeat", "1"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    timed = dict(re.findall(r"^\s+(\w+)\s+([\d.]+)", out, re.MULTILINE))
    assert set(STEPS) <= set(timed), out
    assert float(timed["total"]) > 0 and "updates/s on this host" in out
