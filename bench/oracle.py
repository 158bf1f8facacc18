"""Search time on the published streams, against RapidFlow's (the CPU bar to beat).

    python bench/oracle.py [--backend cpu|gpu] [--unlabeled] [--repeat N] [--only REGEX]

Times every query in count mode exactly as ``dcsm replay --json`` does (it calls the same
function): the engine is loaded and the query registered untimed, then the whole stream goes
through ``Engine.apply`` in batches of ``--batch-size`` updates (default: the whole stream in
one call) and only the time inside ``apply`` counts, from the first update entering the engine
to the last one's completion. A warm-up replay per dataset comes first, so JIT compilation
(numba, CUDA kernels) is not timed; each row is the fastest of ``--repeat`` runs.

Workloads (reference data from ``$DCSM_SHARED_DATA`` or ``../shared/data``):

* oracle-github Q_0..Q_10 on ``insertion10`` (initial90 + stream) and ``deletion10`` (full
  graph + stream); Q_12 (1e9 matches) only with ``--only``.
* enron ``labeled5`` Q1..Q9; ``unlabeled`` Q1..Q9 with ``--unlabeled`` (hours on a CPU: the
  5-vertex queries have 1e10 matches).

Writes the markdown table to ``bench/results/oracle_<backend>.md`` with the command line at
the top; RapidFlow's seconds and match counts come from the ``peer_timings.tsv`` files.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GITHUB = [f"Q_{i}" for i in range(11)]
ENRON = [
    "Q1_triangle",
    "Q2_4cycle",
    "Q3_tailed_triangle",
    "Q4_diamond",
    "Q5_4clique",
    "Q6_5cycle",
    "Q7_house",
    "Q8_bowtie",
    "Q9_5clique",
]


@dataclass(frozen=True)
class Case:
    dataset: str
    query: str
    stream: str
    graph_file: Path
    stream_file: Path
    query_file: Path
    peer_matches: int
    peer_seconds: float


def cases(data: Path, unlabeled: bool, extra_github: list[str]) -> list[Case]:
    out = []
    gh = data / "oracle-github"
    with open(gh / "peer_timings.tsv", newline="") as fh:
        peer = {(r["query"], r["stream"]): r for r in csv.DictReader(fh, delimiter="\t")}
    streams = {"insertion10": "initial90.graph", "deletion10": "full.graph"}
    for stream, graph in streams.items():
        for q in GITHUB + extra_github:
            r = peer[(q, stream)]
            out.append(
                Case(
                    "oracle-github",
                    q,
                    stream,
                    gh / graph,
                    gh / f"{stream}.stream",
                    gh / "queries" / q,
                    int(r["matches"]),
                    float(r["rapidflow_search_seconds"]),
                )
            )
    for workload in ["labeled5"] + (["unlabeled"] if unlabeled else []):
        root = data / "enron" / workload
        with open(root / "peer_timings.tsv", newline="") as fh:
            peer_e = {r["query"]: r for r in csv.DictReader(fh, delimiter="\t")}
        for q in ENRON:
            r = peer_e[q]
            out.append(
                Case(
                    f"enron/{workload}",
                    q,
                    "stream.updates",
                    root / "initial.graph",
                    root / "stream.updates",
                    root / "queries" / q,
                    int(r["matches_positive_plus_negative"]),
                    float(r["rapidflow_search_seconds"]),
                )
            )
    return out


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import numpy

    return (
        f"{cpu}, {os.cpu_count()} logical CPUs; Python {platform.python_version()}, "
        f"numpy {numpy.__version__}, numba {numba.__version__}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--data", type=Path, help="reference data (default: ../shared/data)")
    ap.add_argument("--unlabeled", action="store_true", help="also enron/unlabeled (slow)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per row; the fastest counts")
    ap.add_argument("--batch-size", type=int, default=0, help="updates per apply (0: all)")
    ap.add_argument("--only", help="regex on 'dataset/query/stream' selecting rows")
    ap.add_argument(
        "--out", type=Path, help="markdown file (default bench/results/oracle_<backend>.md)"
    )
    args = ap.parse_args(argv)

    from dcsm.cli import replay

    env = os.environ.get("DCSM_SHARED_DATA")
    data = args.data or (Path(env) if env else REPO.parent / "shared" / "data")
    if not data.is_dir():
        print(f"oracle.py: reference data not found at {data}", file=sys.stderr)
        return 2
    only = re.compile(args.only) if args.only else None
    extra = ["Q_12"] if only and only.search("Q_12") else []
    todo = [
        c
        for c in cases(data, args.unlabeled, extra)
        if only is None or only.search(f"{c.dataset}/{c.query}/{c.stream}")
    ]
    out = args.out or REPO / "bench" / "results" / f"oracle_{args.backend}.md"
    out.parent.mkdir(parents=True, exist_ok=True)

    command = "python bench/oracle.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    header = [
        f"# Search time on the published streams, backend `{args.backend}`",
        "",
        f"Command: `{command.strip()}`",
        "",
        f"Machine: {machine()}. Date: {time.strftime('%Y-%m-%d')}.",
        "",
        "Count mode; seconds = time inside `Engine.apply` for the whole stream (as `dcsm replay "
        f"--json` reports it), fastest of {args.repeat} after a warm-up; matches = positive + "
        "negative; ratio = our seconds / RapidFlow seconds (RapidFlow: single-threaded CPU, "
        "VLDB 2022, search time on a 2-core development machine, from `peer_timings.tsv`).",
        "",
        "| dataset | query | stream | matches | peer matches | seconds | matches/s "
        "| RapidFlow seconds | ratio |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines = list(header)
    print("\n".join(header), flush=True)
    warmed: set[tuple[Path, Path]] = set()
    mismatches = 0
    total_ours = total_peer = 0.0
    for c in todo:

        def run(c: Case = c) -> dict:
            batch = args.batch_size or 1 << 62
            return replay(
                str(c.graph_file),
                str(c.stream_file),
                [str(c.query_file)],
                backend=args.backend,
                batch_size=batch,
            )

        if (c.graph_file, c.stream_file) not in warmed:
            run()  # warm-up: compile and page in everything once per workload
            warmed.add((c.graph_file, c.stream_file))
        best = None
        for _ in range(max(1, args.repeat)):
            report = run()
            if best is None or report["seconds"] < best["seconds"]:
                best = report
        assert best is not None
        q = best["queries"][0]
        matches = q["positive"] + q["negative"]
        secs = best["seconds"]
        mismatches += matches != c.peer_matches
        total_ours += secs
        total_peer += c.peer_seconds
        row = (
            f"| {c.dataset} | {c.query} | {c.stream} | {matches:,} | {c.peer_matches:,} "
            f"| {secs:.4f} | {matches / secs:,.0f} | {c.peer_seconds:.4f} "
            f"| {secs / c.peer_seconds:.1f} |"
        )
        lines.append(row)
        print(row, flush=True)
    footer = [
        "",
        f"Rows: {len(todo)}; rows whose matches differ from the peer's: {mismatches}. "
        f"Total seconds: ours {total_ours:.3f}, RapidFlow {total_peer:.3f} "
        f"(ratio {total_ours / total_peer:.1f}).",
    ]
    lines += footer
    print("\n".join(footer), flush=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
