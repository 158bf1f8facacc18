"""GPU engine benchmark: search time on the published streams, and response time vs rate.

    python3 -P bench/gpu_bench.py --out bench/results/gpu [--data DIR] [--skip-unlabeled]

Part 1 (search time, as RapidFlow reports it): for every query, all updates of an
already-parsed stream are available at time 0; the time runs from the first update entering
``GpuEngine.apply`` to the last update's completion (host admission, transfers and result
assembly included). Count mode counts matches on the device; embedding mode ships every match
to the host and decodes it. Each query runs on the stream's own initial graph: after a timed
run the stream is undone (untimed, no query registered) on the same engine.

Part 2 (response time): the first updates of oracle-github insertion10 replayed with
exponential inter-arrival times at three rates; response time = start of matching - arrival
(DCSM's definition), completion latency = end of matching - arrival. The persistent engine
against the fixed-batch baseline at b = 128 and b = 4096.

Writes ``gpu_bench.json`` and ``gpu_bench.md`` to --out, flushing after every row.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from dcsm.gpu.engine import GpuEngine
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph
from dcsm.model import OUTCOME_APPLIED, UpdateBatch

ORACLE = [f"Q_{i}" for i in range(11)]
ENRON = ["Q1_triangle", "Q2_4cycle", "Q3_tailed_triangle", "Q4_diamond", "Q5_4clique",
         "Q6_5cycle", "Q7_house", "Q8_bowtie", "Q9_5clique"]  # fmt: skip


def peer(path: Path) -> dict[tuple[str, str], tuple[float, int]]:
    """(query, stream) -> (RapidFlow's search seconds, the published match count)."""
    out = {}
    with open(path) as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            matches = r.get("matches") or r["matches_positive_plus_negative"]
            out[(r["query"], r.get("stream", ""))] = (
                float(r["rapidflow_search_seconds"]),
                int(matches),
            )
    return out


def undo(stream: UpdateBatch, outcome: np.ndarray) -> UpdateBatch:
    """Inverse of the applied updates, in reverse order (restores the initial graph)."""
    keep = np.nonzero(outcome == OUTCOME_APPLIED)[0][::-1]
    return UpdateBatch.from_arrays(
        -stream.op[keep], stream.u[keep], stream.v[keep], stream.label[keep]
    )


class Runner:
    """One engine per (graph, stream); every query timed on the same initial graph."""

    def __init__(self, graph_path: Path, stream_path: Path) -> None:
        self.stream = read_csm_stream(stream_path)
        self.engine = GpuEngine()
        self.engine.load_graph(read_graph(graph_path))
        self.seq = 0
        self.qid = 0

    def _shift(self, b: UpdateBatch) -> UpdateBatch:
        out = UpdateBatch.from_arrays(b.op, b.u, b.v, b.label, first_seq=self.seq)
        self.seq += len(b)
        return out

    def time_query(self, query_path: Path, count_only: bool) -> tuple[float, int, int]:
        eng = self.engine
        q, self.qid = self.qid, self.qid + 1
        batch = self._shift(self.stream)
        eng.register(q, read_csm_query(query_path), from_seq=batch.seq[0], count_only=count_only)
        eng.unregister(q, from_seq=batch.seq[-1] + 1)
        t0 = time.perf_counter()
        res = eng.apply(batch)
        seconds = time.perf_counter() - t0
        if count_only:
            pos = int(res.counts.count[res.counts.sign > 0].sum())
            neg = int(res.counts.count[res.counts.sign < 0].sum())
        else:
            pos = int((res.deltas.sign > 0).sum())
            neg = int((res.deltas.sign < 0).sum())
        eng.apply(self._shift(undo(self.stream, res.outcome)))
        return seconds, pos, neg

    def close(self) -> None:
        self.engine.close()


class Report:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.rows: list[dict] = []
        self.latency: list[dict] = []
        self.profiles: list[dict] = []

    def add(self, **row: object) -> None:
        self.rows.append(row)
        print(json.dumps(row), flush=True)
        self.flush()

    def flush(self) -> None:
        (self.out / "gpu_bench.json").write_text(
            json.dumps(
                {"search": self.rows, "latency": self.latency, "updater": self.profiles}, indent=1
            )
        )
        lines = [
            "# GPU engine benchmark",
            "",
            f"Command: `{' '.join(sys.argv)}` on "
            f"{os.environ.get('DCSM_DEVICE', 'the GPU machine')}.",
            "",
            "## Search time (all updates available at time 0)",
            "",
            "| dataset | query | stream | mode | matches | equal to the peer's | GPU s | matches/s "
            "| RapidFlow s | speed-up |",
            "|---|---|---|---|---:|---|---:|---:|---:|---:|",
        ]
        for r in self.rows:
            rf = r.get("rapidflow_s")
            peer_s = "" if rf is None else f"{rf:.4f}"
            ratio = "" if rf is None else f"{rf / r['seconds']:.2f}x"
            pm = r.get("peer_matches")
            same = "" if pm is None else "yes" if pm == r["matches"] else f"**NO** ({pm})"
            lines.append(
                f"| {r['dataset']} | {r['query']} | {r['stream']} | {r['mode']} | {r['matches']} | "
                f"{same} | {r['seconds']:.4f} | {r['matches'] / r['seconds']:.3g} | {peer_s} "
                f"| {ratio} |"
            )
        for mode in ("count", "embedding"):
            sel = [r for r in self.rows if r["dataset"] == "oracle-github" and r["mode"] == mode]
            if len(sel) == 2 * len(ORACLE):
                ours = sum(r["seconds"] for r in sel)
                theirs = sum(r["rapidflow_s"] for r in sel)
                lines += ["", f"oracle-github Q_0..Q_10, both streams, {mode} mode: GPU total "
                              f"{ours:.4f} s vs RapidFlow total {theirs:.4f} s "
                              f"({theirs / ours:.2f}x)."]  # fmt: skip
        if self.profiles:
            keys = [k for k in self.profiles[0] if k != "stream"]
            lines += [
                "",
                "## Graph-updater time per batch (device clock, mean over every batch of the run)",
                "",
                "| stream | " + " | ".join(keys) + " |",
                "|---|" + "---:|" * len(keys),
            ]
            for p in self.profiles:
                lines.append(f"| {p['stream']} | " + " | ".join(f"{p[k]:.1f}" for k in keys) + " |")
        if self.latency:
            lines += [
                "",
                "## Response time vs update rate (oracle-github insertion10, Q_2, count mode)",
                "",
                "| engine | rate (upd/s) | updates | response p50 us | response p99 us | "
                "completion p50 us | completion p99 us | achieved upd/s |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]  # fmt: skip
            for r in self.latency:
                lines.append(
                    f"| {r['engine']} | {r['rate']:.0f} | {r['updates']} | "
                    f"{r['resp_p50_us']:.1f} | "
                    f"{r['resp_p99_us']:.1f} | {r['done_p50_us']:.1f} | {r['done_p99_us']:.1f} | "
                    f"{r['throughput']:.0f} |"
                )
        (self.out / "gpu_bench.md").write_text("\n".join(lines) + "\n")


def search_part(data: Path, report: Report, unlabeled: bool, oracle_count_only: bool) -> None:
    og = data / "oracle-github"
    rf = peer(og / "peer_timings.tsv")
    for stream, graph in (("insertion10", "initial90.graph"), ("deletion10", "full.graph")):
        run = Runner(og / graph, og / f"{stream}.stream")
        run.time_query(og / "queries" / "Q_1", True)  # warm-up (numba, first launch)
        for mode in ("count",) if oracle_count_only else ("count", "embedding"):
            for q in ORACLE:
                s, pos, neg = run.time_query(og / "queries" / q, mode == "count")
                report.add(dataset="oracle-github", query=q, stream=stream, mode=mode,
                           matches=pos + neg, seconds=s, rapidflow_s=rf[(q, stream)][0],
                           peer_matches=rf[(q, stream)][1])  # fmt: skip
        report.profiles.append({"stream": stream, **run.engine.updater_profile()})
        run.close()
    if oracle_count_only:
        return
    for ds in ("labeled5", "unlabeled") if unlabeled else ("labeled5",):
        root = data / "enron" / ds
        rf = {k[0]: v for k, v in peer(root / "peer_timings.tsv").items()}
        run = Runner(root / "initial.graph", root / "stream.updates")
        modes = ("count", "embedding") if ds == "labeled5" else ("count",)
        for mode in modes:
            for q in ENRON:
                s, pos, neg = run.time_query(root / "queries" / q, mode == "count")
                report.add(dataset=f"enron-{ds}", query=q, stream="stream", mode=mode,
                           matches=pos + neg, seconds=s, rapidflow_s=rf[q][0],
                           peer_matches=rf[q][1])  # fmt: skip
        run.close()


def latency_part(data: Path, report: Report, n: int) -> None:
    og = data / "oracle-github"
    stream = read_csm_stream(og / "insertion10.stream").slice(0, n)
    query = read_csm_query(og / "queries" / "Q_2")
    graph = read_graph(og / "initial90.graph")
    rng = np.random.default_rng(7)
    for rate in (10_000.0, 100_000.0, 1_000_000.0):
        gaps = rng.exponential(1.0 / rate, n)
        for name, kwargs in (("DCSM persistent (b=64, t=125us)", {}),
                             ("fixed batch b=128", {"fixed_batch": 128}),
                             ("fixed batch b=4096", {"fixed_batch": 4096})):  # fmt: skip
            eng = GpuEngine(**kwargs)
            eng.load_graph(graph)
            eng.register(0, query, from_seq=0, count_only=True)
            eng.apply(UpdateBatch.from_arrays(np.zeros(0), np.zeros(0), np.zeros(0)))
            start = time.time() + 0.05
            arrival = start + np.cumsum(gaps)
            batch = UpdateBatch.from_arrays(stream.op, stream.u, stream.v, stream.label, ts=arrival)
            res = eng.apply_paced(batch)
            eng.close()
            resp = (res.started - arrival) * 1e6
            done = (res.finished - arrival) * 1e6
            row = dict(engine=name, rate=rate, updates=n,
                       resp_p50_us=float(np.percentile(resp, 50)),
                       resp_p99_us=float(np.percentile(resp, 99)),
                       done_p50_us=float(np.percentile(done, 50)),
                       done_p99_us=float(np.percentile(done, 99)),
                       throughput=n / float(res.finished.max() - arrival[0]))  # fmt: skip
            report.latency.append(row)
            print(json.dumps(row), flush=True)
            report.flush()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", type=Path, default=Path("bench/results/gpu"))
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data"))
    )
    ap.add_argument("--skip-unlabeled", action="store_true")
    ap.add_argument("--skip-search", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--latency-updates", type=int, default=20_000)
    ap.add_argument(
        "--oracle-count-only", action="store_true", help="search time: oracle-github, count mode"
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report = Report(args.out)
    if not args.skip_latency:
        latency_part(args.data, report, args.latency_updates)
    if not args.skip_search:
        search_part(args.data, report, not args.skip_unlabeled, args.oracle_count_only)


if __name__ == "__main__":
    main()
