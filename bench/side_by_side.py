"""The GPU engine and RapidFlow side by side: same host, same call, every row.

    python3 -P bench/side_by_side.py --rapidflow PATH/RapidFlow.out --out bench/results/peers

RapidFlow (github shixuansun/RapidFlow, built by you outside the repository; its binary is
never committed) runs each (query, stream) with ``-num MAX -time_limit --limit``; its
"Search time" is compared with the GPU engine's time for the same row in count mode (all
updates available at time 0, as ``bench/gpu_bench.py`` times it). A RapidFlow run stopped by
its limit prints "Time out..." and partial counts: the row is recorded as timed out, never as
a time. Every count RapidFlow prints is checked against ours and against the published one.
Writes ``side_by_side.json`` and ``side_by_side.md`` (ratio per row, per workload, in total).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # gpu_bench, beside this file

from gpu_bench import ENRON, ORACLE, Runner, peer  # noqa: E402


def rapidflow(binary: Path, graph: Path, query: Path, stream: Path, limit: int) -> dict:
    """One RapidFlow run: search seconds (None when it timed out) and its result count."""
    cmd = [str(binary), "-d", str(graph), "-q", str(query), "-u", str(stream),
           "-num", "MAX", "-time_limit", str(limit)]  # fmt: skip
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=limit * 3 + 120)
    out = run.stdout
    search = re.search(r"Search time \(seconds\): ([0-9.]+)", out)
    count = re.search(r"Result count: (\d+)", out)
    timed_out = "Time out" in out
    failed = None if search else f"exit {run.returncode}: {(run.stderr or out)[-300:]!r}"
    return {
        "seconds": None if timed_out or not search else float(search.group(1)),
        "matches": int(count.group(1)) if count else None,
        "timed_out": timed_out,
        "failed": failed,
    }


def workloads(data: Path) -> list[tuple[str, Path, Path, Path, list[str], dict]]:
    og = data / "oracle-github"
    rows = []
    for stream, graph in (("insertion10", "initial90.graph"), ("deletion10", "full.graph")):
        pub = {q: v for (q, s), v in peer(og / "peer_timings.tsv").items() if s == stream}
        rows.append((f"oracle-github {stream}", og / graph, og / f"{stream}.stream",
                     og / "queries", ORACLE, pub))  # fmt: skip
    for ds in ("labeled5", "unlabeled"):
        root = data / "enron" / ds
        pub = {q: v for (q, _), v in peer(root / "peer_timings.tsv").items()}
        rows.append((f"enron {ds}", root / "initial.graph", root / "stream.updates",
                     root / "queries", ENRON, pub))  # fmt: skip
    return rows


def write(out: Path, rows: list[dict], limit: int) -> None:
    (out / "side_by_side.json").write_text(json.dumps({"limit_s": limit, "rows": rows}, indent=1))
    lines = [
        "# GPU engine and RapidFlow, same host, same call",
        "",
        f"Command: `{' '.join(sys.argv)}` on {os.environ.get('DCSM_DEVICE', 'the GPU machine')};"
        f" RapidFlow's limit {limit} s a row. Count mode, every update available at time 0.",
        "",
        "| workload | query | matches | GPU s | RapidFlow s (same host) | RapidFlow / GPU | "
        "counts equal |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        rf = ("failed" if r["rapidflow_failed"] else "timed out" if r["rapidflow_timed_out"]
              else f"{r['rapidflow_s']:.4f}")  # fmt: skip
        ratio = "-" if r["rapidflow_s"] is None else f"{r['rapidflow_s'] / r['gpu_s']:.2f}x"
        lines.append(f"| {r['workload']} | {r['query']} | {r['matches']:,} | {r['gpu_s']:.4f} | "
                     f"{rf} | {ratio} | {r['counts_equal']} |")  # fmt: skip
    lines += ["", "| workload | rows | GPU s | RapidFlow s (rows that finished) | ratio | "
              "GPU faster in | timed out |", "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for w in [*dict.fromkeys(r["workload"] for r in rows), "all"]:
        sel = [r for r in rows if w in ("all", r["workload"])]
        done = [r for r in sel if r["rapidflow_s"] is not None]
        g, f = sum(r["gpu_s"] for r in done), sum(r["rapidflow_s"] for r in done)
        faster = sum(r["rapidflow_s"] > r["gpu_s"] for r in done)
        lines.append(f"| {w} | {len(sel)} | {g:.3f} | {f:.3f} | {f / g if g else 0:.2f}x | "
                     f"{faster} of {len(done)} | {len(sel) - len(done)} |")  # fmt: skip
    (out / "side_by_side.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--rapidflow", type=Path, required=True, help="RapidFlow.out")
    ap.add_argument("--data", type=Path,
                    default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data")))  # fmt: skip
    ap.add_argument("--limit", type=int, default=20, help="RapidFlow's time limit a row (s)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/peers"))
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for name, graph, stream, qdir, queries, pub in workloads(args.data):
        run = Runner(graph, stream)
        run.time_query(qdir / queries[0], True)  # warm-up (first launch)
        for q in queries:
            s, pos, neg = run.time_query(qdir / q, True)
            rf = rapidflow(args.rapidflow, graph, qdir / q, stream, args.limit)
            ours, published = pos + neg, pub.get(q, (None, None))[1]
            rows.append({
                "workload": name, "query": q, "matches": ours, "published_matches": published,
                "gpu_s": s, "rapidflow_s": rf["seconds"], "rapidflow_timed_out": rf["timed_out"],
                "rapidflow_matches": rf["matches"], "rapidflow_failed": rf["failed"],
                "counts_equal": ours == published
                and (rf["timed_out"] or rf["failed"] is not None or rf["matches"] == ours),
            })  # fmt: skip
            print(json.dumps(rows[-1]), flush=True)
            write(args.out, rows, args.limit)
            if rf["failed"] and len(rows) == 1:  # the binary does not run on this host
                run.close()
                raise SystemExit(f"RapidFlow failed on the first row: {rf['failed']}")
        run.close()


if __name__ == "__main__":
    main()
