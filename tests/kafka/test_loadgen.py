"""``dcsm loadgen --embedded`` on a tiny sweep: it observes every update that changes the
graph (the CPU engine says which), on both output paths, and writes its JSON and PNG."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import oracle_counts

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Pattern

pytestmark = pytest.mark.kafka


def test_loadgen_embedded_sweep(tmp_path, broker) -> None:
    # (``broker``: only for its skip when tansu is unavailable; --embedded starts its own.)
    out = tmp_path / "out"
    argv = ["--embedded", "--rates", "200,400", "--duration", "2", "--vertices", "500",
            "--seed", "5", "--encoding", "json", "--out", str(out)]  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "dcsm.service", "loadgen", *argv],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "results.json").read_text())
    assert (out / "latency.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Oracle: the probe (one edge, count mode) fires once per update that changes the graph.
    stream = powerlaw_stream(500, 1200, num_labels=3, seed=5, gamma=2.5)
    probe = Pattern.build("_loadgen_probe", [None, None], [(0, 1, None)])
    changed = oracle_counts(stream, probe)
    pos = 0
    for res, rate in zip(report["results"], (200, 400), strict=True):
        n = rate * 2
        want = sum(1 for s in changed if pos <= s < pos + n)
        assert res["updates"] == n and res["first_seq"] == pos
        assert res["e2e_kafka_ms"]["n"] == want
        assert res["e2e_websocket_ms"]["n"] == want
        assert 0 < res["e2e_kafka_ms"]["p50"] <= res["e2e_kafka_ms"]["p99"] < 5000
        assert res["throughput"] > 0
        pos += n
    # Sustained means what the report says it means, and 200/s is far below what even a
    # loaded 2-core CI machine sustains.
    slo = report["config"]["slo_p99_ms"]
    for res in report["results"]:
        kept = res["send_rate"] >= 0.95 * res["target_rate"]
        drained = res["drained_after_send_s"] is not None
        within = res["e2e_kafka_ms"]["p99"] is not None and res["e2e_kafka_ms"]["p99"] <= slo
        assert not res["sustained"] or (kept and drained and within), res
    assert report["results"][0]["sustained"], report["results"][0]
    sustained = [r["target_rate"] for r in report["results"] if r["sustained"]]
    assert report["max_sustained_rate"] == max(sustained)
    assert report["max_sustained_rate"] in (200, 400)
