"""bench/debug/decode_cost.py, the embeddings-mode decode timed without a GPU, run as a script
on a small ring: the script checks the decoded rows against numpy across a stamp wrap and a
ring wrap, and prints its ns a record."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_decode_cost_runs_and_checks_its_rows() -> None:
    out = subprocess.run(
        [sys.executable, "-P", str(ROOT / "bench/debug/decode_cost.py"), "--records", "3000000",
         "--vertices", "2", "--graph-vertices", "1000", "--repeat", "1"],
        check=True, capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    ns = re.search(r"([\d.]+) ns a record", out)
    assert ns is not None and float(ns.group(1)) > 0, out
