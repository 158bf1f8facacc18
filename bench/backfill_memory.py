"""How many backfill rows wait in memory while an uncapped embeddings backfill runs beside
the stream: the rows the job holds (slices done but not yet sent) plus those handed to the
events queue and not yet taken by the fan-out, taken at every hand-over and every
millisecond (the rows of a slice still running are not counted), with parts
streamed (service/backfill.py) and, for comparison, with every row held to the end (the
service before parts). The fan-out is a consumer thread that takes one event at a time.

    python bench/backfill_memory.py --edges 4000 --threads 2 [--out bench/results/backfill]
"""

from __future__ import annotations

import argparse
import json
import queue
import threading
import time
from pathlib import Path

from dcsm.engine.cpu import CpuEngine
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Pattern
from dcsm.service.backfill import Backfiller
from dcsm.service.messages import BackfillDone, BackfillPart, Register

PATH4 = Pattern.build("path4", [None] * 4, [(0, 1, None), (1, 2, None), (2, 3, None)])


def run(engine: CpuEngine, threads: int, stream: bool) -> dict:
    events: queue.Queue = queue.Queue()
    waiting = [0]  # rows handed to the events queue, not yet consumed
    peak = [0]
    lock = threading.Lock()

    def held() -> int:  # rows the job holds plus rows in the queue (call with lock)
        return sum(len(r[1]) for r in job._results if r is not None) + waiting[0]

    def emit(ev: object) -> None:
        rows = getattr(ev, "matches", None)
        with lock:
            peak[0] = max(peak[0], held())  # the moment before the hand-over
            waiting[0] += 0 if rows is None else len(rows)
        events.put(ev)

    backfiller = Backfiller(emit, threads)
    cmd = Register(qid=1, pattern=PATH4, from_seq=0, count_only=False, backfill=True)
    job = backfiller.job(cmd, engine.static_snapshot())
    job.streams = stream
    shipped, parts = 0, 0
    t0 = time.perf_counter()
    backfiller.start(job)
    while True:
        with lock:
            peak[0] = max(peak[0], held())
        try:
            ev = events.get(timeout=0.001)
        except queue.Empty:
            continue
        rows = 0 if ev.matches is None else len(ev.matches)
        with lock:
            waiting[0] -= rows
        shipped += rows
        if isinstance(ev, BackfillPart):
            parts += 1
        if isinstance(ev, BackfillDone):
            assert ev.error is None and ev.count == shipped
            break
    backfiller.close()
    width = PATH4.num_vertices * 8
    return {"streamed": stream, "rows": shipped, "parts": parts,
            "peak_rows_waiting": peak[0], "peak_mb": peak[0] * width / 1e6,
            "all_rows_mb": shipped * width / 1e6,
            "seconds": time.perf_counter() - t0}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=4000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    engine = CpuEngine()
    engine.apply(powerlaw_stream(args.edges // 8, args.edges, num_labels=1, seed=1,
                                 delete_fraction=0.0))  # fmt: skip
    run(engine, args.threads, True)  # warm-up: numba compilation
    rows = [run(engine, args.threads, s) for s in (False, True)]
    for r in rows:
        print(json.dumps(r))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "backfill-memory.json").write_text(
            json.dumps(
                {
                    "command": " ".join(
                        [
                            "bench/backfill_memory.py",
                            f"--edges {args.edges}",
                            f"--threads {args.threads}",
                        ]
                    ),
                    "rows": rows,
                },
                indent=1,
            )
            + "\n"  # fmt: skip
        )


if __name__ == "__main__":
    main()
