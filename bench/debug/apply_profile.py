"""Where one GpuEngine.apply call spends its time on the host (cProfile), and the device
timeline of that call: first update taken by the updater, first match started, last update
finished, each relative to the call's start.

    python3 -P bench/debug/apply_profile.py [--data DIR] [--query Q_0] [--stream insertion10] \
        [--batch-cap 4096 16384] [--piece 4096]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from pathlib import Path

import numpy as np

from dcsm.gpu.engine import GpuEngine
from dcsm.graphio import read_csm_query, read_csm_stream, read_graph
from dcsm.model import UpdateBatch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--data", type=Path, default=Path(os.environ.get("DCSM_SHARED_DATA", "../shared/data"))
    )
    ap.add_argument("--query", default="Q_0")
    ap.add_argument("--stream", default="insertion10")
    ap.add_argument("--batch-cap", type=int, nargs="+", default=[4096])
    ap.add_argument("--piece", type=int, default=0, help="updates sent at a time (0: default)")
    args = ap.parse_args()
    if args.piece:
        import dcsm.gpu.engine as ge

        ge._PIECE = ge._PIECE_MAX = args.piece
    for cap in args.batch_cap:
        print(f"== batch_cap {cap}")
        profile(args, cap)


def profile(args: argparse.Namespace, batch_cap: int) -> None:
    og = args.data / "oracle-github"
    graph = "initial90.graph" if args.stream == "insertion10" else "full.graph"
    stream = read_csm_stream(og / f"{args.stream}.stream")
    eng = GpuEngine(batch_cap=batch_cap)
    eng.load_graph(read_graph(og / graph))
    eng.register(0, read_csm_query(og / "queries" / args.query), from_seq=0, count_only=True)
    # Warm-up (numba compilation of the host decoders): a few updates and their inverse.
    k = 200
    eng.apply(UpdateBatch.from_arrays(stream.op[:k], stream.u[:k], stream.v[:k], stream.label[:k]))
    eng.apply(
        UpdateBatch.from_arrays(
            -stream.op[:k][::-1], stream.u[:k][::-1], stream.v[:k][::-1], stream.label[:k][::-1],
            first_seq=k,
        )
    )  # fmt: skip
    batch = UpdateBatch.from_arrays(stream.op, stream.u, stream.v, stream.label, first_seq=2 * k)
    eng.apply(batch)
    seq = 2 * k + len(batch)
    for _ in range(4):  # steady state: undo and redo, untimed
        res = eng.apply(UpdateBatch.from_arrays(-batch.op[::-1], batch.u[::-1], batch.v[::-1],
                                                batch.label[::-1], first_seq=seq))  # fmt: skip
        seq += len(batch)
        res = eng.apply(UpdateBatch.from_arrays(batch.op, batch.u, batch.v, batch.label,
                                                first_seq=seq))  # fmt: skip
        seq += len(batch)
    eng.apply(UpdateBatch.from_arrays(-batch.op[::-1], batch.u[::-1], batch.v[::-1],
                                      batch.label[::-1], first_seq=seq))  # fmt: skip
    batch = UpdateBatch.from_arrays(batch.op, batch.u, batch.v, batch.label,
                                    first_seq=seq + len(batch))  # fmt: skip
    writes: list[tuple[float, int]] = []  # (epoch s after the write, records)
    write = eng._ring.write

    def timed_write(recs, wait, due=None):  # type: ignore[no-untyped-def]
        out = write(recs, wait, due)
        writes.append((time.time(), len(recs)))
        return out

    eng._ring.write = timed_write  # type: ignore[method-assign]
    prof = cProfile.Profile()
    t0 = time.time()
    p0 = time.perf_counter()
    prof.enable()
    res = eng.apply(batch)
    prof.disable()
    wall = time.perf_counter() - p0
    print(
        f"apply: {wall * 1e3:.2f} ms; device: first start {1e3 * (res.started.min() - t0):.2f} ms, "
        f"last finish {1e3 * (res.finished.max() - t0):.2f} ms after the call began"
    )
    print("host writes (ms after the call began, records):",
          [(round(1e3 * (t - t0), 2), k) for t, k in writes])  # fmt: skip
    batches(eng.last_timeline, t0)
    print(eng.updater_profile(), eng.stats())
    pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
    eng.close()


def batches(line: dict, t0: float) -> None:
    """One row per batch the updater took: its size, when it was taken, when its first
    match started and its last update finished (ms after the call began)."""
    taken = line.get("taken")
    if taken is None or not len(taken):
        return
    order = np.argsort(taken, kind="stable")
    t = taken[order]
    cuts = np.nonzero(np.diff(t) > 0)[0] + 1
    print("batch  size  taken  first-start  last-finish (ms)")
    for i, idx in enumerate(np.split(order, cuts)):
        print(
            f"{i:5d} {len(idx):5d} {1e3 * (taken[idx[0]] - t0):6.2f} "
            f"{1e3 * (line['started'][idx].min() - t0):6.2f} "
            f"{1e3 * (line['finished'][idx].max() - t0):6.2f}"
        )


if __name__ == "__main__":
    main()
