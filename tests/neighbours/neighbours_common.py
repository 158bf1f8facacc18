"""What the neighbour tests share: the skip rule for a missing tool, one workload with its
oracle, and the check of ``dcsm.matches`` records read by a client that is not ours.

The workload is a seeded power-law stream split into JSON records (single objects and one
array) and binary batches; three registrations of the triangle read it back: ``tri`` (json
frames, one per delta), ``trib`` (batch frames) and ``tric`` (count mode). Everything
expected comes from the CPU engine run directly on the same updates (``helpers.oracle_*``).
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import TRI, oracle_counts, oracle_deltas, spec, updates_json

from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import UpdateBatch
from dcsm.service.codec import encode_binary
from dcsm.service.frames import rows

INSTALL = "bash scripts/install-neighbours.sh"


def need_tool(name: str) -> str:
    """The path of executable ``name``, or skip the test saying how to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (run `{INSTALL}`)")
    return path


def need_module(name: str) -> Any:
    """Import ``name``, or skip the test saying how to install it."""
    return pytest.importorskip(name, reason=f"python package {name} missing (run `{INSTALL}`)")


# The triangle three ways: json frames, batch frames, count mode.
QUERIES = {
    "tri": {"encoding": "json"},
    "trib": {"encoding": "batch"},
    "tric": {"mode": "count"},
}


@dataclass
class Workload:
    batch: UpdateBatch
    records: list[bytes]  # values for the input topic, in order
    kinds: list[str]  # "json" | "array" | "binary", per record

    @classmethod
    def make(cls, seed: int = 41, n: int = 600, json_share: int = 300) -> Workload:
        """``json_share`` updates as single JSON objects, then one JSON array of 20, then
        the rest as binary batches of at most 100 updates."""
        batch = powerlaw_stream(50, n, num_labels=2, seed=seed)
        rows_ = updates_json(batch)
        records = [json.dumps(r).encode() for r in rows_[:json_share]]
        kinds = ["json"] * len(records)
        records.append(json.dumps(rows_[json_share : json_share + 20]).encode())
        kinds.append("array")
        for i in range(json_share + 20, n, 100):
            records.append(encode_binary(batch.slice(i, min(i + 100, n))))
            kinds.append("binary")
        return cls(batch, records, kinds)

    def expected(self, from_seq: int = 0) -> tuple[list, dict[int, int]]:
        """Sorted (query, sign, seq, match) deltas of ``tri`` and ``trib``; tric's counts."""
        tri = oracle_deltas(self.batch, [(TRI, from_seq)])
        deltas = sorted([("tri", *d[1:]) for d in tri] + [("trib", *d[1:]) for d in tri])
        return deltas, oracle_counts(self.batch, TRI, from_seq)


def register_queries(base_url: str) -> None:
    """The three triangle registrations, before any update (so each sees them all)."""
    with httpx.Client(base_url=base_url, timeout=30, trust_env=False) as c:
        for name, extra in QUERIES.items():
            r = c.post("/api/v1/queries", json=spec(TRI, name=name, **extra))
            assert r.status_code == 201, r.text
            assert r.json()["from_seq"] == 0


def wait_processed(base_url: str, last_seq: int, timeout_s: float = 60.0) -> dict[str, Any]:
    """Poll /api/v1/status until every update up to ``last_seq`` is fanned out."""
    deadline = time.monotonic() + timeout_s
    status: dict[str, Any] = {}
    with httpx.Client(base_url=base_url, timeout=10, trust_env=False) as c:
        while time.monotonic() < deadline:
            status = c.get("/api/v1/status").json()
            if status["processed_seq"] >= last_seq:
                return status
            time.sleep(0.1)
    raise TimeoutError(f"processed_seq {status.get('processed_seq')} < {last_seq}")


@dataclass
class Record:
    """One ``dcsm.matches`` record as a foreign client saw it."""

    key: bytes | None
    headers: dict[str, bytes]
    value: bytes


@dataclass
class Seen:
    deltas: list  # sorted (query, sign, seq, match)
    counts: dict[int, int]  # tric: seq -> signed count
    frames: dict[str, int]  # frames per query


def check_records(records: Iterable[Record]) -> Seen:
    """Checks every record's key and headers against its frame, and per-query order; the
    frames' content as deltas and counts (batch frames split into rows)."""
    deltas: list = []
    counts: dict[int, int] = {}
    frames: dict[str, int] = {}
    last: dict[str, int] = {}
    for rec in records:
        frame = json.loads(rec.value)
        q = frame["query"]
        assert rec.key == q.encode(), f"record key {rec.key!r} for a frame of {q}"
        frames[q] = frames.get(q, 0) + 1
        kind = frame.get("type")
        if kind in (None, "count"):  # per-row json frame: its id travels in a header too
            assert rec.headers == {"id": frame["id"].encode()}, rec.headers
        else:
            assert kind in ("deltas", "counts") and not rec.headers, (kind, rec.headers)
        for row in rows(frame):
            assert row["seq"] >= last.get(q, -1), "per-query order on the topic"
            last[q] = row["seq"]
            assert len(row["id"]) == 16
            if row.get("type") == "count":
                assert q == "tric"
                counts[row["seq"]] = counts.get(row["seq"], 0) + row["sign"] * row["count"]
            else:
                deltas.append((q, int(row["sign"]), int(row["seq"]), tuple(row["match"])))
    return Seen(sorted(deltas), counts, frames)


def read_until(
    read: Callable[[], list[Record]], want_deltas: int, want_counts: int, timeout_s: float = 60
) -> Seen:
    """Calls ``read`` (a full read of the topic from the beginning) until it holds at least
    the expected rows, then once more after a pause so extras would show."""
    deadline = time.monotonic() + timeout_s
    seen = check_records(read())
    while time.monotonic() < deadline:
        if len(seen.deltas) >= want_deltas and len(seen.counts) >= want_counts:
            time.sleep(0.5)
            return check_records(read())
        time.sleep(0.3)
        seen = check_records(read())
    return seen


# -- the Grafana dashboard ------------------------------------------------------------------

DASHBOARD = Path(__file__).resolve().parents[2] / "deploy/grafana/dashboards/dcsm.json"
DEPLOY_PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy/prometheus.yml"

# Grafana's variables, as the test Prometheus (1 s scrapes) can evaluate them.
GRAFANA_VARS = {"$__rate_interval": "10s", "$__interval": "1s", "$query": ".*"}


def dashboard_exprs(path: Path = DASHBOARD) -> list[str]:
    """Every PromQL expression of the dashboard: panel targets (rows' nested panels too)."""
    board = json.loads(path.read_text())
    out: list[str] = []

    def walk(panels: list[dict[str, Any]]) -> None:
        for p in panels:
            out.extend(t["expr"] for t in p.get("targets", []) if t.get("expr"))
            walk(p.get("panels", []))

    walk(board.get("panels", []))
    return out


def dashboard_variable_queries(path: Path = DASHBOARD) -> list[str]:
    """The templating variables' Prometheus queries (``label_values(metric, label)`` ...)."""
    board = json.loads(path.read_text())
    out = []
    for var in board.get("templating", {}).get("list", []):
        q = var.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if var.get("type") == "query" and q:
            out.append(q)
    return out


_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
    "unless", "offset", "inf", "nan",
}  # fmt: skip
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression (or a Grafana ``label_values``/``metrics``
    variable query) selects. Strings, label matchers ``{...}``, ranges ``[...]``, grouping
    clauses ``by (...)`` and function names are not metric names; ``$variables`` are dropped."""
    m = re.fullmatch(
        r"\s*label_values\(\s*(?:([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s*,)?\s*\w+\s*\)\s*", expr
    )
    if m:
        return {m.group(1)} if m.group(1) else set()
    names = set(re.findall(r'__name__\s*=\s*"([a-zA-Z_:][\w:]*)"', expr))
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    s = re.sub(r"\$\{?\w+\}?", " ", s)
    for tok in _IDENT.finditer(s):
        rest = s[tok.end() :].lstrip()
        if rest.startswith("("):  # a function (or aggregation) call
            continue
        if tok.group().lower() in _KEYWORDS:
            continue
        if tok.start() > 0 and (s[tok.start() - 1].isdigit() or s[tok.start() - 1] == "."):
            continue  # part of a number such as 1e3
        names.add(tok.group())
    return names


def exported_names(metrics_text: str) -> set[str]:
    """Every series name a Prometheus text exposition declares or carries: each ``# TYPE``
    line's name (with ``_bucket``, ``_sum``, ``_count`` for a histogram, ``_sum`` and
    ``_count`` for a summary: the names PromQL selects), and every sample's name. A labelled
    counter declared but not yet incremented (``dcsm_dead_letters_total`` before the first
    rejected record) is exported by name, though it has no series yet."""
    from prometheus_client.parser import text_string_to_metric_families

    suffixes = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}
    names = set()
    for line in metrics_text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[:2] == ["#", "TYPE"]:
            names.add(parts[2])
            names.update(parts[2] + s for s in suffixes.get(parts[3], ()))
    for fam in text_string_to_metric_families(metrics_text):
        names.update(s.name for s in fam.samples)
    return names


def send_updates(base_url: str, batch: UpdateBatch, chunk: int = 50) -> None:
    """``batch`` through POST /api/v1/updates, ``chunk`` updates a request."""
    body = updates_json(batch)
    with httpx.Client(base_url=base_url, timeout=60, trust_env=False) as c:
        for i in range(0, len(body), chunk):
            r = c.post("/api/v1/updates", json=body[i : i + chunk])
            assert r.status_code == 200, r.text
