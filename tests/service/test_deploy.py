"""The deploy files agree with the code: every metric the dashboard plots is one the
service exports, and the compose file wires the service to Kafka and Prometheus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import yaml
from prometheus_client import generate_latest

from dcsm.service.metrics import Metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_dashboard_metrics_exist() -> None:
    m = Metrics()
    m.response_seconds.observe_many("q", np.array([0.001]))
    m.match_latency_seconds.observe_many("q", np.array([0.001]))
    m.updates_total.labels("insert", "applied").inc()
    m.deltas_total.labels("q", "+").inc()
    m.dead_letters_total.labels("malformed").inc()
    m.bind_queue("engine", lambda: 0)
    exported = generate_latest(m.registry).decode()
    names = set(re.findall(r"^(\w+)(?:\{| )", exported, re.M))
    dash = json.loads((DEPLOY / "grafana/dashboards/dcsm.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    used = {n for e in exprs for n in re.findall(r"\b((?:dcsm|process)_\w+)", e)}
    assert "dcsm_response_seconds_bucket" in used
    assert used <= names, used - names


def test_compose_wires_kafka_service_prometheus_grafana() -> None:
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    svc = compose["services"]
    assert {"kafka", "dcsm", "prometheus", "grafana"} <= set(svc)
    assert svc["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"  # KRaft
    assert svc["dcsm"]["environment"]["DCSM_KAFKA"] == "kafka:9092"
    for s in svc.values():
        assert all(str(p).startswith("127.0.0.1:") for p in s.get("ports", []))
    prom = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert prom["scrape_configs"][0]["static_configs"][0]["targets"] == ["dcsm:8000"]
    docker = (DEPLOY / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["python", "-m", "dcsm.service"]' in docker


def test_replicas_profile_and_statefulset() -> None:
    """The compose profile runs replicas 0 and 1 of 2 on their own state; the StatefulSet
    takes the replica index from the pod ordinal, DCSM_REPLICAS from spec.replicas, and one
    GPU per pod; the settings they set load."""
    from dcsm.service.settings import Settings

    svc = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    reps = [svc["dcsm-r0"], svc["dcsm-r1"]]
    envs = [r["environment"] for r in reps]
    assert [e["DCSM_REPLICA_INDEX"] for e in envs] == ["0", "1"]
    assert {e["DCSM_REPLICAS"] for e in envs} == {"2"}
    assert all(r["profiles"] == ["replicas"] for r in reps)
    assert reps[0]["volumes"] != reps[1]["volumes"]
    for e in envs:
        env = {k: str(v) for k, v in e.items() if k != "DCSM_INSECURE_OPEN"}
        s = Settings.load(None, env)
        assert (s.replicas, s.shard, s.group) == (2, "queries", f"dcsm.{s.replica_index}")
    docs = list(yaml.safe_load_all((DEPLOY / "k8s/dcsm-replicas.yaml").read_text()))
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    container = sts["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["DCSM_REPLICAS"]["value"] == str(sts["spec"]["replicas"])
    index = env["DCSM_REPLICA_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    assert index == "metadata.labels['apps.kubernetes.io/pod-index']"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
