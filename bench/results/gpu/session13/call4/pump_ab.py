"""A/B of the paced writer's pump interval (gpu/input_ring.py _PUMP_NS), taking turns in one
process: the sustained 1M/s row (200,000 updates, insertion10 inserted then deleted) and the
100K/s row (20,000 updates), as bench/gpu_bench.py runs them. 10**12: the writer before the
change (it pumped only when no record was due within 50 us or the ring was full)."""

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")
import gpu_bench as gb  # noqa: E402

import dcsm.gpu.input_ring as ir  # noqa: E402
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph  # noqa: E402

og = Path(".shdata/oracle-github")
ins = read_csm_stream(og / "insertion10.stream")
query = read_csm_query(og / "queries" / "Q_2")
graph = read_graph(og / "initial90.graph")
eng = gb.new_engine()
eng.load_graph(graph)
eng.register(0, query, from_seq=0, count_only=True)
eng.apply(ins.slice(0, 2000))
eng.close()
cycle = gb.insert_delete_cycle(ins, 200_000)
keys = (
    "resp_p50_us",
    "resp_p99_us",
    "ring_p50_us",
    "late_p99_us",
    "seen_p50_us",
    "seen_p99_us",
    "offered",
    "throughput",
    "mean_batch",
)
for turn in (1, 2):
    for ns in (100_000, 30_000, 300_000, 10**12):
        ir._PUMP_NS = ns
        for rate, stream, n, seed in ((1e6, cycle, 200_000, 8), (1e5, ins, 20_000, 9)):
            gaps = np.random.default_rng(seed).exponential(1.0 / rate, n)
            row = gb.paced_row(
                "DCSM persistent (b=64, t=0)",
                {"batch_timeout_us": 0.0},
                graph,
                query,
                stream.slice(0, n),
                gaps,
                rate,
                None,
            )
            print(
                json.dumps(
                    {
                        "turn": turn,
                        "pump_ns": ns,
                        "rate": rate,
                        **{k: round(row[k], 1) for k in keys if k in row},
                    }
                ),
                flush=True,
            )
