"""``dcsm demo`` end to end as a user runs it (its own tansu broker, no shared data): the
per-query totals it reports equal the CPU engine's on the same generated stream."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from helpers import oracle_counts, oracle_deltas

from dcsm.service.demo import DEMO_QUERIES, demo_stream

pytestmark = pytest.mark.kafka


def test_demo_runs_and_reports_exact_totals(tmp_path, broker) -> None:
    # (``broker``: only for its skip when tansu is unavailable; the demo starts its own.)
    argv = ["--duration", "3", "--rate", "1500", "--vertices", "1500", "--seed", "3", "--plain"]
    proc = subprocess.run(
        [sys.executable, "-m", "dcsm.service", "demo", "--backend", "cpu", *argv],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("summary: ")][-1]
    summary = json.loads(line[len("summary: ") :])
    args = argparse.Namespace(
        duration=3.0, rate=1500.0, vertices=1500, seed=3, labels=3, graph=None
    )
    batch = demo_stream(args)
    assert summary["updates"] == len(batch)
    for pattern, mode in DEMO_QUERIES:
        got = summary["queries"][pattern.name]
        if mode == "count":
            per_seq = oracle_counts(batch, pattern)
            plus = sum(v for v in per_seq.values() if v > 0)
            minus = -sum(v for v in per_seq.values() if v < 0)
        else:
            d = oracle_deltas(batch, [(pattern, 0)])
            plus = sum(1 for x in d if x[1] == 1)
            minus = len(d) - plus
        assert (got["+"], got["-"], got["gaps"]) == (plus, minus, 0), pattern.name
    assert sum(v["+"] for v in summary["queries"].values()) > 100  # the demo shows something
    assert not list(tmp_path.iterdir()), "the demo leaves no files behind"
