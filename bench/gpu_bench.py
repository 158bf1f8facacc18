"""GPU engine benchmark: search time on the published streams, and response time vs rate.

    python3 -P bench/gpu_bench.py --out bench/results/gpu [--data DIR] [--skip-unlabeled] \
        [--rapidflow PATH/RapidFlow.out --rapidflow-limit 60]

Part 1 (search time, as RapidFlow reports it): for every query, all updates of an
already-parsed stream are available at time 0; the time runs from the first update entering
``GpuEngine.apply`` to the last update's completion (host admission, transfers and result
assembly included), the median of ``--repeat`` timed applies (default 5; each one's seconds
are in the row's ``seconds_each``). Count mode counts matches on the device; embedding mode
ships every match to the host and decodes it. Each query runs on the stream's own initial
graph: after a timed run the stream is undone (untimed, no query registered) on the same
engine.

With ``--rapidflow`` (or ``$DCSM_RAPIDFLOW``), RapidFlow (github shixuansun/RapidFlow, built by
you outside the repository, never committed) runs every (query, stream) on the same host in the
same call, ``-num MAX -time_limit LIMIT``, right after our row; its "Search time" becomes the
row's ``rapidflow_same_host_s``: the median of ``--rapidflow-repeat`` runs (default: as many
as ours, ``--repeat``) while a run's search takes under a second, each run's in
``rapidflow_same_host_each_s``. A run stopped by its limit prints "Time out" and partial
counts: the row is recorded as timed out, never as a time. Every count it prints is checked
against ours. The published figure stays beside it as ``rapidflow_published_s``. Each workload
also gets an "all at once" row: every query registered together, against the sum of
RapidFlow's rows.

Part 2 (response time): the first updates of oracle-github insertion10 replayed with
exponential inter-arrival times at three rates; response time = start of matching - arrival
(DCSM's definition), completion latency = end of matching - arrival. The persistent engine
against the fixed-batch baseline at b = 128 and b = 4096. Offered: the replayed arrivals'
own rate (n - 1 over the span from the first to the last); achieved: n over the time from the
first arrival to the last completion, so a short row's achieved rate also pays the last
update's latency. A last row holds 1M/s for ``--sustain-updates`` (default 200,000:
insertion10 inserted, deleted in reverse, and again), where that latency is ~0.5 % of the
window.

Writes ``gpu_bench.json`` and ``gpu_bench.md`` to --out, flushing after every row.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

from dcsm.gpu.call_result import clock_slack
from dcsm.gpu.engine import GpuEngine
from dcsm.gpu.layout import SMALL_STEPS
from dcsm.gpu_options import add_engine_flag
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph
from dcsm.model import OP_DELETE, OP_INSERT, OUTCOME_APPLIED, Graph, Pattern, UpdateBatch

sys.path.insert(0, str(Path(__file__).parent))  # bench/ (the script runs with python -P)
from rapidflow import REPEAT_BELOW_S, RapidFlow  # noqa: E402

ORACLE = [f"Q_{i}" for i in range(11)]
# oracle-github's streams and the graph each starts from
ORACLE_STREAMS = {"insertion10": "initial90.graph", "deletion10": "full.graph"}
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


# GpuEngine arguments for every engine of the run (--engine KEY=VALUE), beside each call's own.
ENGINE_OPTIONS: dict[str, float] = {}


def new_engine(**kwargs: float) -> GpuEngine:
    return GpuEngine(**{**ENGINE_OPTIONS, **kwargs})  # type: ignore[arg-type]


# GpuEngine.stats() counters that an apply moves only when it drains to look at the pools,
# compacts the slab pool or grows a table (each a stop of the stream's flow).
POOL_COUNTERS = ("pool_looks", "pool_compactions", "pool_slabs", "max_versions", "max_vertices")


def host_cpu() -> int:
    """The core this thread last ran on (/proc/thread-self/stat's 39th field); -1 where
    the OS does not say. The light rows' modes followed the process (turn_modes.py): each
    row records its applies' cores, to set beside their times."""
    try:
        return int(Path("/proc/thread-self/stat").read_text().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return -1


def host_python_us() -> float:
    """How fast this thread's core runs Python now: a fixed piece of pure Python, least of
    3, in us. On the lent H200 host it took 853-1,072 us or 1,390-1,758 us, for seconds at
    a time on one core, and a light row's apply followed it (r = 0.86 over 27 launches,
    bench/results/gpu/session41/README.md, call 4): each row records it beside its applies,
    so that turns can be compared within one mode (compare_turns.py --python-below)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        sum(i * i for i in range(20_000))
        best = min(best, time.perf_counter() - t)
    return 1e6 * best


def pool_events(before: dict[str, int], after: dict[str, int]) -> str:
    """What changed in POOL_COUNTERS, e.g. "pool_looks 3->4, pool_slabs 1024->2048"; ""
    when nothing did."""
    return ", ".join(
        f"{k} {before.get(k)}->{after.get(k)}"
        for k in POOL_COUNTERS
        if before.get(k) != after.get(k)
    )


class Runner:
    """One engine per (graph, stream); every query timed on the same initial graph."""

    def __init__(self, graph_path: Path, stream_path: Path, batch_cap: int) -> None:
        self.stream = read_csm_stream(stream_path)
        self.engine = new_engine(batch_cap=batch_cap)
        self.engine.load_graph(read_graph(graph_path))
        self.seq = 0
        self.qid = 0
        self.cpus: list[int] = []  # host_cpu() after each timed apply of time_query
        self.python_us: list[float] = []  # host_python_us() after each one

    def _shift(self, b: UpdateBatch) -> UpdateBatch:
        out = UpdateBatch.from_arrays(b.op, b.u, b.v, b.label, first_seq=self.seq)
        self.seq += len(b)
        return out

    def time_query(
        self, query_path: Path, count_only: bool, repeat: int = 1
    ) -> tuple[float, list[float], int, int, str, list[int]]:
        """The median of ``repeat`` timed applies of the stream (each undone after), every
        one's seconds, + and - matches (equal in every repetition, else an error), what
        the first timed apply did to the pools, and every one's page faults."""
        self.cpus, self.python_us = [], []
        runs = [self.time_once(query_path, count_only) for _ in range(repeat)]
        if len({(pos, neg) for _, pos, neg, _, _ in runs}) != 1:
            raise RuntimeError(f"{query_path.name}: repetitions disagree: {runs}")
        seconds = [s for s, _, _, _, _ in runs]
        faults = [f for _, _, _, _, f in runs]
        return float(np.median(seconds)), seconds, runs[0][1], runs[0][2], runs[0][3], faults

    def time_once(self, query_path: Path, count_only: bool) -> tuple[float, int, int, str, int]:
        """(seconds, + matches, - matches, what the timed apply did to the pools, the
        process's minor page faults during the timed apply: first touches of memory, ~2 us
        each on the development host)."""
        eng = self.engine
        q, self.qid = self.qid, self.qid + 1
        batch = self._shift(self.stream)
        eng.register(q, read_csm_query(query_path), from_seq=batch.seq[0], count_only=count_only)
        eng.unregister(q, from_seq=batch.seq[-1] + 1)
        before = eng.stats()
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        res = eng.apply(batch)
        seconds = time.perf_counter() - t0
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        self.cpus.append(host_cpu())
        self.python_us.append(round(host_python_us(), 1))
        events = pool_events(before, eng.stats())
        if count_only:
            pos = int(res.counts.count[res.counts.sign > 0].sum())
            neg = int(res.counts.count[res.counts.sign < 0].sum())
        else:
            pos = int((res.deltas.sign > 0).sum())
            neg = int((res.deltas.sign < 0).sum())
        eng.apply(self._shift(undo(self.stream, res.outcome)))
        return seconds, pos, neg, events, faults

    def time_all(self, query_paths: list[Path]) -> tuple[float, int]:
        """Every query registered at once, count mode: (seconds, total matches)."""
        eng = self.engine
        batch = self._shift(self.stream)
        first = self.qid
        for path in query_paths:
            eng.register(self.qid, read_csm_query(path), from_seq=batch.seq[0], count_only=True)
            eng.unregister(self.qid, from_seq=batch.seq[-1] + 1)
            self.qid += 1
        t0 = time.perf_counter()
        res = eng.apply(batch)
        seconds = time.perf_counter() - t0
        assert set(res.counts.query.tolist()) <= set(range(first, self.qid))
        eng.apply(self._shift(undo(self.stream, res.outcome)))
        return seconds, int(res.counts.count.sum())

    def close(self) -> None:
        self.engine.close()


ALL_AT_ONCE = "all at once"


def _rf_cell(r: dict) -> str:
    if r.get("rapidflow_timed_out"):
        return "timed out"
    if r.get("rapidflow_same_host_s") is not None:
        return f"{r['rapidflow_same_host_s']:.4f}"
    return "" if r.get("rapidflow_failed") in (None, "not run") else "failed"


def _ratio(theirs: float | None, ours: float) -> str:
    return "" if theirs is None or not ours else f"{theirs / ours:.2f}x"


class Report:
    def __init__(self, out: Path, rapidflow_limit: int, rapidflow_repeat: int = 1) -> None:
        self.out = out
        self.rapidflow_limit = rapidflow_limit
        self.rapidflow_repeat = rapidflow_repeat
        self.rows: list[dict] = []
        self.latency: list[dict] = []
        self.profiles: list[dict] = []

    def _row_ratio(self, r: dict) -> str:
        if r.get("rapidflow_timed_out") and r["seconds"]:
            return f"> {self.rapidflow_limit / r['seconds']:.2f}x"  # a lower bound
        return _ratio(r.get("rapidflow_same_host_s"), r["seconds"])

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
            "RapidFlow same host: run in this call on this machine (limit "
            f"{self.rapidflow_limit} s a row; the median of up to {self.rapidflow_repeat} "
            f"runs while a run takes under {REPEAT_BELOW_S:g} s); published: "
            "`peer_timings.tsv`. Ratio = "
            "RapidFlow same host / GPU; where RapidFlow timed out, at least its limit / GPU.",
            "",
            "| dataset | query | stream | mode | matches | equal to the published | GPU s | "
            "RapidFlow same host s | ratio | RapidFlow published s |",
            "|---|---|---|---|---:|---|---:|---:|---:|---:|",
        ]
        for r in self.rows:
            pm = r.get("peer_matches")
            same = "" if pm is None else "yes" if pm == r["matches"] else f"**NO** ({pm})"
            if r.get("rapidflow_counts_equal") is False:
                same += f"; **RapidFlow here: {r['rapidflow_same_host_matches']}**"
            pub = r.get("rapidflow_published_s")
            lines.append(
                f"| {r['dataset']} | {r['query']} | {r['stream']} | {r['mode']} | "
                f"{r['matches']:,} | {same} | {r['seconds']:.4f} | {_rf_cell(r)} | "
                f"{self._row_ratio(r)} | "
                f"{'' if pub is None else f'{pub:.4f}'} |"
            )
        events = [r for r in self.rows if r.get("pool_events")]
        if events:
            lines += ["", "Timed applies that drained to look at the engine's pools, compacted "
                      "or grew them (each a stop of the flow):", ""]  # fmt: skip
            lines += [f"- {r['dataset']} {r['query']} {r['stream']} {r['mode']}: "
                      f"{r['pool_events']}" for r in events]  # fmt: skip
        lines += ["", "### Totals (rows where RapidFlow finished on this host)", "",
                  "| dataset | mode | rows | GPU s | RapidFlow same host s | ratio | "
                  "GPU faster in | RapidFlow timed out |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        groups = dict.fromkeys((r["dataset"], r["mode"]) for r in self.rows)
        for ds, mode in [*groups, ("all", "count")]:
            sel = [r for r in self.rows if ds in ("all", r["dataset"]) and r["mode"] == mode]
            sel = [r for r in sel if r["query"] != ALL_AT_ONCE]
            done = [r for r in sel if r.get("rapidflow_same_host_s") is not None]
            g = sum(r["seconds"] for r in done)
            f = sum(r["rapidflow_same_host_s"] for r in done)
            faster = sum(r["rapidflow_same_host_s"] > r["seconds"] for r in done)
            timed = sum(bool(r.get("rapidflow_timed_out")) for r in sel)
            lines.append(f"| {ds} | {mode} | {len(sel)} | {g:.4f} | {f:.4f} | {_ratio(f, g)} | "
                         f"{faster} of {len(done)} | {timed} |")  # fmt: skip
        if self.profiles:
            keys = list(dict.fromkeys(k for p in self.profiles for k in p if k != "stream"))
            lines += [
                "",
                "## Graph-updater time per batch (device clock, mean over every batch of the run)",
                "",
                "| stream | " + " | ".join(keys) + " |",
                "|---|" + "---:|" * len(keys),
            ]
            for p in self.profiles:
                cells = " | ".join(f"{p.get(k, 0.0):.1f}" for k in keys)
                lines.append(f"| {p['stream']} | {cells} |")
        if self.latency:
            lines += [
                "",
                "## Response time vs update rate (oracle-github insertion10, Q_2, count mode)",
                "",
                "| engine | rate (upd/s) | updates | response p50 us | response p99 us | "
                "completion p50 us | completion p99 us | offered upd/s | achieved upd/s |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
            ]  # fmt: skip
            for r in self.latency:
                lines.append(
                    f"| {r['engine']} | {r['rate']:.0f} | {r['updates']} | "
                    f"{r['resp_p50_us']:.1f} | "
                    f"{r['resp_p99_us']:.1f} | {r['done_p50_us']:.1f} | {r['done_p99_us']:.1f} | "
                    f"{r.get('offered', float('nan')):.0f} | {r['throughput']:.0f} |"
                )
            parts = [r for r in self.latency if "late_p50_us" in r]
            if parts:
                lines += [
                    "",
                    "Where the response time goes (p50 / p99 us): the pacer's lateness "
                    "(scheduled arrival -> written into the input ring), ring -> read by the "
                    "updater, read -> matching started (the updater's batch); and the "
                    "response time counted from entry into the ring. Short path: the share "
                    "of batches updater warp 0 applied alone (updater_small.cuh), and the "
                    "cost models at the end (us per short batch, per update and per chunk "
                    "copied on top of it, per bulk batch of at most 32 updates), and its "
                    "mean us per short batch in each step ("
                    + ", ".join(SMALL_STEPS) + "). Seen: entry into the ring -> the host read "
                    "the completion, on the host's clock alone. Clock check: the least ring "
                    "wait and the least time from the device's finish to the host's read; "
                    "both are >= 0 when the device clock's mapping is right (bench/gpu_bench.py; "
                    "the engine maps by pings answered while it runs, gpu/device_clock.py). "
                    "Bounded: the response time with the device's times moved by the second "
                    "(an upper bound: dcsm.gpu.call_result.clock_slack), and the width of the "
                    "bounds the two give.",
                    "",
                    "| engine | rate (upd/s) | late | ring | updater | response from entry | "
                    "seen | clock check | response bounded | slack | mean batch | short path | "
                    "models | short steps |",
                    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
                ]  # fmt: skip
                for r in parts:
                    keys = ("late", "ring", "updater", "resp_entered", "seen")
                    cells = " | ".join(
                        f"{r.get(k + '_p50_us', float('nan')):.1f} / "
                        f"{r.get(k + '_p99_us', float('nan')):.1f}" for k in keys
                    )  # fmt: skip
                    cells += " | {:.1f} / {:.1f} | {:.1f} / {:.1f} | {:.1f}".format(
                        *(r.get(k, float("nan")) for k in (
                            "ring_min_us", "seen_after_finish_min_us", "resp_bounded_p50_us",
                            "resp_bounded_p99_us", "clock_slack_us")))  # fmt: skip
                    models = "{:.1f} / {:.2f} / {:.3f} / {:.1f}".format(
                        *(r.get(k, 0.0) for k in ("model_fixed_us", "model_update_us",
                                                  "model_chunk_us", "model_bulk_us")))  # fmt: skip
                    steps = " / ".join(f"{r.get(f'small_{k}_us', 0.0):.1f}" for k in SMALL_STEPS)
                    lines.append(f"| {r['engine']} | {r['rate']:.0f} | {cells} | "
                                 f"{r['mean_batch']:.1f} | {r.get('small_share', 0.0):.0%} | "
                                 f"{models} | {steps} |")  # fmt: skip
        (self.out / "gpu_bench.md").write_text("\n".join(lines) + "\n")


def search_part(
    data: Path,
    report: Report,
    rapidflow: RapidFlow,
    unlabeled: bool,
    oracle_count_only: bool,
    batch_cap: int,
    repeat: int,
) -> None:
    og = data / "oracle-github"
    workloads = [("oracle-github", stream, og / graph, og / f"{stream}.stream", og / "queries",
                  ORACLE, peer(og / "peer_timings.tsv"), ("count",) if oracle_count_only
                  else ("count", "embedding"))
                 for stream, graph in ORACLE_STREAMS.items()]  # fmt: skip
    for ds in (
        () if oracle_count_only else ("labeled5", "unlabeled") if unlabeled else ("labeled5",)
    ):
        root = data / "enron" / ds
        pub = {(q, "stream"): v for (q, _), v in peer(root / "peer_timings.tsv").items()}
        workloads.append((f"enron-{ds}", "stream", root / "initial.graph",
                          root / "stream.updates", root / "queries", ENRON, pub,
                          ("count", "embedding") if ds == "labeled5" else ("count",)))  # fmt: skip
    # Every workload's GPU rows first, then RapidFlow's runs of all of them: no GPU row is
    # timed right after RapidFlow's. A GPU row timed right after them took ~7 % longer
    # (bench/results/gpu/session28/README.md); the first three rows of the workload after
    # them, 1.5-2x (bench/results/gpu/session39/README.md, call 3).
    finished: list[tuple[str, str, Path, Path, Path, list[str], dict, list, float, int]] = []
    for dataset, stream, graph, updates, qdir, queries, pub, modes in workloads:
        rows: list[tuple[dict, Path, int]] = []  # (row, query file, our matches)
        run = Runner(graph, updates, batch_cap)
        run.time_once(qdir / queries[0], True)  # warm-up (numba, first launch)
        try:
            for mode in modes:
                for q in queries:
                    s, each, pos, neg, events, faults = run.time_query(qdir / q, mode == "count",
                                                                       repeat)  # fmt: skip
                    rows.append((dict(dataset=dataset, query=q, stream=stream, mode=mode,
                                      matches=pos + neg, seconds=s, seconds_each=each,
                                      page_faults_each=faults, host_cpu_each=run.cpus,
                                      host_python_us_each=run.python_us,
                                      pool_events=events,
                                      rapidflow_published_s=pub[(q, stream)][0],
                                      peer_matches=pub[(q, stream)][1]),
                                 qdir / q, pos + neg))  # fmt: skip
            s, total = run.time_all([qdir / q for q in queries])
            report.profiles.append({"stream": f"{dataset} {stream}",
                                    **run.engine.updater_profile()})  # fmt: skip
        finally:
            run.close()
        finished.append((dataset, stream, graph, updates, qdir, queries, pub, rows, s, total))
    for dataset, stream, graph, updates, qdir, queries, pub, rows, s, total in finished:
        for row, query, ours in rows:
            report.add(**row, **rapidflow.fields(graph, query, updates, ours))
        theirs = [rapidflow.run(graph, qdir / q, updates)["seconds"] for q in queries]
        report.add(dataset=dataset, query=ALL_AT_ONCE, stream=stream, mode="count",
                   matches=total, seconds=s,
                   peer_matches=sum(pub[(q, stream)][1] for q in queries),
                   rapidflow_published_s=sum(pub[(q, stream)][0] for q in queries),
                   rapidflow_same_host_s=None if None in theirs else sum(theirs))  # fmt: skip


def insert_delete_cycle(stream: UpdateBatch, n: int) -> UpdateBatch:
    """n updates from a stream of insertions: its insertions in order, then the same edges
    deleted in the reverse order, and so on. Every second pass leaves the graph as it found
    it, so the stream may be as long as a run needs."""
    if len(stream) == 0 or (stream.op != OP_INSERT).any():
        raise ValueError("insert_delete_cycle needs a non-empty stream of insertions")
    back = slice(None, None, -1)
    op = np.concatenate([stream.op, np.full(len(stream), OP_DELETE, dtype=stream.op.dtype)])
    u, v, label = (np.concatenate([a, a[back]]) for a in (stream.u, stream.v, stream.label))
    reps = -(-n // len(op))
    return UpdateBatch.from_arrays(*(np.tile(a, reps)[:n] for a in (op, u, v, label)))


# The engines of the response-time rows: the persistent kernel with and without a batch
# timeout, and the fixed-batch baselines.
PACED_ENGINES: tuple[tuple[str, dict[str, float]], ...] = (
    ("DCSM persistent (b=64, t=125us)", {"batch_timeout_us": 125.0}),
    ("DCSM persistent (b=64, t=0)", {"batch_timeout_us": 0.0}),
    ("fixed batch b=128", {"fixed_batch": 128}),
    ("fixed batch b=4096", {"fixed_batch": 4096}),
)


def paced_row(
    name: str,
    kwargs: dict[str, float],
    graph: Graph,
    query: Pattern,
    stream: UpdateBatch,
    gaps: np.ndarray,
    rate: float,
    timelines: Path | None,
    suffix: str = "",
) -> dict:
    """One response-time row: a fresh engine on `graph` with `query` registered, `stream`
    replayed with the inter-arrival times `gaps` (seconds)."""
    eng = new_engine(**kwargs)
    eng.load_graph(graph)
    eng.register(0, query, from_seq=0, count_only=True)
    eng.apply(UpdateBatch.from_arrays(np.zeros(0), np.zeros(0), np.zeros(0)))
    arrival = time.time() + 0.05 + np.cumsum(gaps)
    batch = UpdateBatch.from_arrays(stream.op, stream.u, stream.v, stream.label, ts=arrival)
    res = eng.apply_paced(batch)
    line = eng.last_timeline
    profile = eng.updater_profile()
    clock = eng.clock_report()
    eng.close()
    if timelines is not None and "persistent" in name:
        # Every update's stamps (host and device clocks), for clock studies.
        timelines.mkdir(parents=True, exist_ok=True)
        tag = f"{int(rate)}-t{int(kwargs['batch_timeout_us'])}{suffix}"
        np.savez_compressed(timelines / f"timeline-{tag}.npz", arrival=arrival,
                            **{k: v for k, v in line.items() if v is not None})  # fmt: skip
    resp = (res.started - arrival) * 1e6
    done = (res.finished - arrival) * 1e6
    n = len(stream)
    row = dict(engine=name, rate=rate, updates=n,
               resp_p50_us=float(np.percentile(resp, 50)),
               resp_p99_us=float(np.percentile(resp, 99)),
               done_p50_us=float(np.percentile(done, 50)),
               done_p99_us=float(np.percentile(done, 99)),
               offered=(n - 1) / float(arrival[-1] - arrival[0]),
               throughput=n / float(res.finished.max() - arrival[0]))  # fmt: skip
    if line.get("entered") is not None and line["entered"].all():
        # Where the response time goes: the pacer's lateness (scheduled arrival ->
        # written into the input ring), ring -> taken by the updater, taken ->
        # matching started; and the response time from entry into the ring.
        sched = arrival[line["update"]]
        for key, us in (("late", line["entered"] - sched),
                        ("ring", line["taken"] - line["entered"]),
                        ("updater", line["started"] - line["taken"]),
                        ("resp_entered", line["started"] - line["entered"]),
                        ("seen", line["seen"] - line["entered"])):  # fmt: skip
            row[f"{key}_p50_us"] = float(np.percentile(us * 1e6, 50))
            row[f"{key}_p99_us"] = float(np.percentile(us * 1e6, 99))
        # The device's times are mapped to the host's clock by the engine's clock
        # pings (gpu/device_clock.py). Each update was taken after it entered and
        # finished before the host saw it, so both minima are >= 0 when the mapping
        # is right, and their sum is how far it could be off (a large ring minimum
        # with a seen one near 0 means the ring wait is real, not the mapping).
        ring_min = float((line["taken"] - line["entered"]).min())
        seen_min = float((line["seen"] - line["finished"]).min())
        row["ring_min_us"] = ring_min * 1e6
        row["seen_after_finish_min_us"] = seen_min * 1e6
        # The response time with the device's times moved by the tightest bound
        # those two minima give (still an upper bound), and how wide the bounds are.
        lo, hi = clock_slack(ring_min, seen_min)
        row["resp_bounded_p50_us"] = float(np.percentile(resp + hi * 1e6, 50))
        row["resp_bounded_p99_us"] = float(np.percentile(resp + hi * 1e6, 99))
        row["clock_slack_us"] = float((hi - lo) * 1e6)
    # The mapping of device times in use at the end (gpu/device_clock.py).
    row["clock_offset_slack_us"] = clock["slack_us"]
    row["clock_answers"] = clock["answers"]
    row["clock_drift_ppm"] = clock["drift_ppm"]
    row["mean_batch"] = profile["mean_batch"]
    row["small_share"] = profile["small_batches"] / max(1, profile["batches"])
    for key in ("model_fixed_us", "model_update_us", "model_chunk_us", "model_bulk_us"):
        row[key] = profile[key]
    for key in SMALL_STEPS:
        row[f"small_{key}_us"] = profile[f"small_{key}_us"]
    # Where a batch's time went: the updater's phases and steps, mean us a batch
    # (short and bulk batches together; JSON only).
    row["updater_steps_us"] = {k: v for k, v in profile.items() if k.endswith("_us")
                               and not k.startswith(("small_", "model_"))}  # fmt: skip
    return row


def latency_part(
    data: Path, report: Report, n: int, timelines: Path | None = None, sustain: int = 0
) -> None:
    og = data / "oracle-github"
    insertions = read_csm_stream(og / "insertion10.stream")
    stream = insertions.slice(0, n)
    query = read_csm_query(og / "queries" / "Q_2")
    graph = read_graph(og / "initial90.graph")
    rng = np.random.default_rng(7)
    # Warm-up, not reported: the process's first engine pays for compiling and loading.
    eng = new_engine()
    eng.load_graph(graph)
    eng.register(0, query, from_seq=0, count_only=True)
    eng.apply(stream.slice(0, min(n, 2000)))
    eng.close()

    def record(row: dict) -> None:
        report.latency.append(row)
        print(json.dumps(row), flush=True)
        report.flush()

    for rate in (10_000.0, 100_000.0, 1_000_000.0):
        gaps = rng.exponential(1.0 / rate, n)
        for name, kwargs in PACED_ENGINES:
            record(paced_row(name, kwargs, graph, query, stream, gaps, rate, timelines))
    if sustain:
        # 1M/s held long enough that the last update's completion, ~1 ms after its
        # arrival, is a small part of the window (in a 20,000-update row it is ~6 %):
        # insertion10's insertions, then their deletions, and again (own seed, so the rows
        # above keep theirs).
        cycle = insert_delete_cycle(insertions, sustain)
        gaps = np.random.default_rng(8).exponential(1e-6, sustain)
        name, kwargs = PACED_ENGINES[1]
        record(paced_row(f"{name}, sustained", kwargs, graph, query, cycle, gaps, 1_000_000.0,
                         timelines, "-sustained"))  # fmt: skip


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
        "--sustain-updates",
        type=int,
        default=200_000,
        help="one more row at 1M/s this long (insertion10 inserted, then deleted, ...); 0: none",
    )
    ap.add_argument("--timelines", type=Path, help="save each persistent latency row's stamps here")
    ap.add_argument(
        "--oracle-count-only", action="store_true", help="search time: oracle-github, count mode"
    )
    ap.add_argument(
        "--rapidflow",
        type=Path,
        default=os.environ.get("DCSM_RAPIDFLOW") or None,
        help="RapidFlow.out to run beside every row (default: $DCSM_RAPIDFLOW)",
    )
    ap.add_argument(
        "--rapidflow-limit", type=int, default=60,
        help="its time limit a row (s), on its search only: RapidFlow reads and indexes the "
        "graph first (2-3 min at 43M edges)",
    )  # fmt: skip
    ap.add_argument(
        "--rapidflow-repeat", type=int, default=None,
        help="its runs a row, the median taken, while a run's search takes under "
        f"{REPEAT_BELOW_S:g} s (default: --repeat)",
    )  # fmt: skip
    ap.add_argument(
        "--batch-cap", type=int, default=16384, help="search time: the engine's batch_cap"
    )
    ap.add_argument(
        "--repeat", type=int, default=5,
        help="search time: a row's seconds are the median of this many timed applies",
    )  # fmt: skip
    ap.add_argument(
        "--piece", type=int, default=0,
        help="updates the host sends at a time (0: the engine's rule, gpu.engine.piece_size)",
    )  # fmt: skip
    ap.add_argument(
        "--first-piece", type=int, default=0,
        help="at most this many updates in an apply's first piece (0: engine's _PIECE_FIRST)",
    )  # fmt: skip
    add_engine_flag(ap, "n_updaters=7")
    args = ap.parse_args()
    ENGINE_OPTIONS.update(args.engine)
    import dcsm.gpu.engine as ge

    if args.piece:
        ge._PIECE = ge._PIECE_MAX = args.piece
    if args.first_piece:
        ge._PIECE_FIRST = args.first_piece
    args.out.mkdir(parents=True, exist_ok=True)
    rf_repeat = args.repeat if args.rapidflow_repeat is None else args.rapidflow_repeat
    report = Report(args.out, args.rapidflow_limit, rf_repeat)
    rapidflow = RapidFlow(args.rapidflow and Path(args.rapidflow), args.rapidflow_limit, rf_repeat)
    if not args.skip_latency:
        latency_part(args.data, report, args.latency_updates, args.timelines, args.sustain_updates)
    if not args.skip_search:
        search_part(args.data, report, rapidflow, not args.skip_unlabeled,
                    args.oracle_count_only, args.batch_cap, args.repeat)  # fmt: skip


if __name__ == "__main__":
    main()
