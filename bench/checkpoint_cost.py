"""What a checkpoint costs, by phase, at a given graph size and backend.

    python bench/checkpoint_cost.py --edges 1000000 --backend cpu --out bench/results/service

Builds an engine holding a seeded power-law graph of ``--edges`` edges (bulk load), then,
``--repeat`` times: the engine thread's part (``export_graph``: the data path waits for it),
and the writer thread's part (``Checkpoint.save``: temp file, fsync, rename; off the data
path). Also applies ``--updates`` updates between checkpoints to report the engine's own rate
on that graph, so the export can be read as "updates not applied meanwhile". Writes
``checkpoint_cost_<backend>.json`` and prints a markdown row.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from dcsm.arrays import unique_sorted
from dcsm.engine import make_engine, warm_up
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Graph, Pattern
from dcsm.service.checkpoint import Checkpoint


def graph_of(edges: int, seed: int) -> Graph:
    """A power-law graph of about ``edges`` distinct edges (inserts of a synthetic stream)."""
    s = powerlaw_stream(max(1000, edges // 8), int(edges * 1.15), seed=seed, delete_fraction=0.0)
    a, b = np.minimum(s.u, s.v), np.maximum(s.u, s.v)
    key = unique_sorted(a * (1 << 32) + b)[:edges]
    src, dst = key >> 32, key & ((1 << 32) - 1)
    ids = unique_sorted(np.concatenate([src, dst]))
    return Graph(ids, np.zeros(len(ids), np.int32), src, dst, np.zeros(len(src), np.int32))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--edges", type=int, default=1_000_000)
    p.add_argument("--backend", default="cpu", choices=["cpu", "gpu"])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--updates", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--out", default="bench/results/service")
    args = p.parse_args()
    warm_up(args.backend)
    graph = graph_of(args.edges, args.seed)
    eng = make_engine(args.backend)
    t = time.perf_counter()
    eng.load_graph(graph)
    load_s = time.perf_counter() - t
    tri = Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)])
    eng.register(0, tri, from_seq=0, count_only=True)
    stream = powerlaw_stream(max(1000, args.edges // 8), args.updates * args.repeat, seed=9)
    export_s, write_s, apply_s, sizes = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            batch = stream.slice(i * args.updates, (i + 1) * args.updates)
            t = time.perf_counter()
            for k in range(0, len(batch), 8192):
                eng.apply(batch.slice(k, k + 8192))
            apply_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            g = eng.export_graph()
            export_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            path = Checkpoint(g, int(batch.seq[-1]) + 1).save(Path(tmp))
            write_s.append(time.perf_counter() - t)
            sizes.append(path.stat().st_size)
    eng.close()
    med = lambda xs: float(np.median(xs))  # noqa: E731
    row = {
        "backend": args.backend,
        "edges": int(g.num_edges),
        "vertices": int(g.num_vertices),
        "bulk_load_s": load_s,
        "export_s_median": med(export_s),
        "export_s": export_s,
        "write_s_median": med(write_s),
        "write_s": write_s,
        "file_bytes": sizes[-1],
        "apply_updates_per_s": args.updates / med(apply_s),
    }
    row["updates_delayed_per_checkpoint"] = row["export_s_median"] * row["apply_updates_per_s"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"checkpoint_cost_{args.backend}.json").write_text(json.dumps(row, indent=2))
    print(
        f"| {args.backend} | {row['edges']:,} | {row['export_s_median'] * 1e3:.1f} | "
        f"{row['write_s_median'] * 1e3:.1f} | {row['file_bytes'] / 1e6:.1f} | "
        f"{row['apply_updates_per_s']:,.0f} |"
    )


if __name__ == "__main__":
    main()
