"""The Grafana dashboard (deploy/grafana/dashboards/dcsm.json) only plots metrics the service
exports: every metric name in its PromQL (panels and variables) appears in a running
``dcsm serve``'s /metrics once it has processed updates for a query; the ``job`` it selects
is the one deploy/prometheus.yml scrapes. No tool needed beyond the service itself."""

from __future__ import annotations

import re

import httpx
import yaml
from helpers import TRI, spec
from neighbours_common import (
    DASHBOARD,
    DEPLOY_PROMETHEUS,
    dashboard_exprs,
    dashboard_variable_queries,
    exported_names,
    metric_names,
    send_updates,
)

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.loadgen.synth import powerlaw_stream


def test_metric_name_extraction() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, query) (rate(a_seconds_bucket{query=~"$query"}'
        "[$__rate_interval]))) / on (job) group_left b_total + 1e3 * c offset 5m"
    )
    assert metric_names(expr) == {"a_seconds_bucket", "b_total", "c"}
    assert metric_names('{__name__="d_bytes", job="x"}') == {"d_bytes"}
    assert metric_names('label_values(e_bucket{q="1"}, query)') == {"e_bucket"}
    assert metric_names("label_values(query)") == set()


def test_dashboard_metrics_are_exported(tmp_path) -> None:
    exprs = dashboard_exprs() + dashboard_variable_queries()
    used: dict[str, list[str]] = {}
    for e in exprs:
        for name in metric_names(e):
            used.setdefault(name, []).append(e)
    assert len(exprs) >= 10 and len(used) >= 8, (DASHBOARD, used)

    with ServiceProcess(workdir=tmp_path) as svc:
        with httpx.Client(base_url=svc.base_url, timeout=30, trust_env=False) as c:
            assert c.post("/api/v1/queries", json=spec(TRI)).status_code == 201
        send_updates(svc.base_url, powerlaw_stream(40, 300, num_labels=1, seed=5))
        text = httpx.get(svc.base_url + "/metrics", timeout=30, trust_env=False).text
    exported = exported_names(text)
    missing = {n: used[n] for n in sorted(used) if n not in exported}
    assert not missing, f"dashboard metrics the service does not export: {missing}"

    # A `job` the dashboard selects is a job deploy/prometheus.yml scrapes.
    jobs = {j["job_name"] for j in yaml.safe_load(DEPLOY_PROMETHEUS.read_text())["scrape_configs"]}
    for e in exprs:
        for job in re.findall(r'\bjob\s*=\s*"([^"]*)"', e):
            assert job in jobs, (e, jobs)
