"""A real Prometheus (Debian package ``prometheus``) scrapes a running ``dcsm serve`` every
second; its query API returns the latency histogram's quantiles and evaluates every
expression of the Grafana dashboard. ``promtool check config`` passes on
deploy/prometheus.yml."""

from __future__ import annotations

import asyncio
import math
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from helpers import TRI, spec
from neighbours_common import (
    DEPLOY_PROMETHEUS,
    GRAFANA_VARS,
    dashboard_exprs,
    need_tool,
    send_updates,
)

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.service.broker import free_port


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [need_tool("promtool"), *args], capture_output=True, text=True, timeout=60
    )


def test_promtool_checks_deploy_config() -> None:
    r = promtool("check", "config", str(DEPLOY_PROMETHEUS))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout + r.stderr


class Prometheus:
    """``prometheus`` on a free loopback port, scraping ``target`` (host:port) every 1 s."""

    def __init__(self, binary: str, target: str, workdir: Path) -> None:
        self.port = free_port()
        self.config = workdir / "prometheus.yml"
        self.config.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "scrape_configs": [
                        # The job name the dashboard selects (process_* {job="dcsm"}).
                        {"job_name": "dcsm", "static_configs": [{"targets": [target]}]}
                    ],
                }
            )
        )
        self.log_path = workdir / "prometheus.log"
        self.cmd = [
            binary, f"--config.file={self.config}", f"--storage.tsdb.path={workdir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ]  # fmt: skip
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 30) -> Prometheus:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"prometheus exited: {self.log()}"
            try:
                if httpx.get(self.url + "/-/ready", timeout=1, trust_env=False).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"prometheus not ready in {timeout_s}s: {self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def query(self, expr: str) -> list[dict[str, Any]]:
        r = httpx.get(
            self.url + "/api/v1/query", params={"query": expr}, timeout=10, trust_env=False
        )
        body = r.json()
        assert r.status_code == 200 and body["status"] == "success", (expr, body)
        assert body["data"]["resultType"] == "vector", body
        return body["data"]["result"]


@pytest.fixture
def prometheus_binary() -> str:
    need_tool("promtool")
    return need_tool("prometheus")


async def produce_raw(bootstrap: str, topic: str, value: bytes) -> None:
    from aiokafka import AIOKafkaProducer

    p = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await p.start()
    try:
        await p.send_and_wait(topic, value)
    finally:
        await p.stop()


@pytest.mark.kafka
def test_prometheus_scrapes_service_and_returns_latency_histogram(
    prometheus_binary, broker, topics, make_service, tmp_path
) -> None:
    batch = powerlaw_stream(60, 2000, num_labels=1, seed=11)
    svc = make_service()
    # One record the service rejects, so the dashboard's dead-letter panel has a series too.
    asyncio.run(produce_raw(broker.bootstrap, topics.updates, b"not json"))
    with httpx.Client(base_url=svc.base_url, timeout=30, trust_env=False) as c:
        assert c.post("/api/v1/queries", json=spec(TRI)).status_code == 201
    prom = Prometheus(prometheus_binary, f"127.0.0.1:{svc.port}", tmp_path)
    r = promtool("check", "config", str(prom.config))
    assert r.returncode == 0, r.stdout + r.stderr
    prom.start()
    try:
        p99 = (
            "histogram_quantile(0.99, sum by (le) "
            '(rate(dcsm_match_latency_seconds_bucket{query="tri"}[10s])))'
        )
        p50_response = (
            "histogram_quantile(0.5, sum by (le) "
            '(rate(dcsm_response_seconds_bucket{query="tri"}[10s])))'
        )
        # Updates keep arriving in small requests while Prometheus scrapes, so the
        # histogram's rate over the window is not zero.
        values: dict[str, float] = {}
        deadline = time.monotonic() + 60
        i = 0
        while time.monotonic() < deadline and len(values) < 2:
            send_updates(svc.base_url, batch.slice(i % 2000, i % 2000 + 50))
            i += 50
            time.sleep(0.2)
            for expr in (p99, p50_response):
                res = prom.query(expr)
                if res and math.isfinite(float(res[0]["value"][1])):
                    values[expr] = float(res[0]["value"][1])
        assert len(values) == 2, (values, prom.log())
        assert 0 < values[p99] <= 10.0  # within the histogram's finite buckets
        assert 0 <= values[p50_response] <= 10.0

        targets = httpx.get(prom.url + "/api/v1/targets", timeout=10, trust_env=False)
        (target,) = targets.json()["data"]["activeTargets"]
        assert target["health"] == "up", target
        assert target["labels"]["job"] == "dcsm"

        # Every dashboard expression evaluates and returns series (Grafana's variables
        # as the dashboard's "All" and a 10 s rate window).
        for expr in dashboard_exprs():
            e = expr
            for var, value in GRAFANA_VARS.items():
                e = e.replace(var, value)
            assert prom.query(e), f"no series for the dashboard's {expr!r}"
    finally:
        prom.stop()
