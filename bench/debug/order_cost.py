"""The GPU engine's embeddings-mode ordering, timed without a GPU: ns per match row of
``MatchRows.ordered`` (gpu/rings.py), the counting sort that puts an apply's decoded rows in
(update, query) order, at 1 .. --threads numba threads.

    python3 -P bench/debug/order_cost.py [--rows 4000000] [--updates 28900] [--width 5] \
        [--batch 8000] [--threads 2] [--repeat 3]

Rows arrive as the kernel's executors finish them: batch by batch (``--batch`` updates a
batch, as the updater takes them), in any order within a batch. Prints the best of
``--repeat`` orderings at each thread count, and checks one against numpy's stable sort.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from dcsm.gpu.rings import MatchRows


def filled(rows: int, updates: int, width: int, batch: int) -> tuple[MatchRows, np.ndarray]:
    """A MatchRows holding ``rows`` rows of one query, and their updates in arrival order."""
    rng = np.random.default_rng(0)
    upd = np.sort(rng.integers(0, updates, rows)).astype(np.int32)
    upd = upd[np.lexsort((rng.random(rows), upd // batch))]  # batch by batch, shuffled within
    out = MatchRows(width)
    for lo in range(0, rows, out.chunk_rows):
        hi = min(rows, lo + out.chunk_rows)
        match = np.empty((out.chunk_rows, width), np.int64)
        match[: hi - lo] = rng.integers(0, 1 << 20, (hi - lo, width))
        u, s = np.zeros(out.chunk_rows, np.int32), np.zeros(out.chunk_rows, np.int32)
        u[: hi - lo] = upd[lo:hi]
        out.chunks.append((u, s, match))
        out.fill = hi - lo
    out.n = rows
    return out, upd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--updates", type=int, default=28_900)
    ap.add_argument("--width", type=int, default=5, help="the query's vertices")
    ap.add_argument("--batch", type=int, default=8000, help="updates a kernel batch")
    ap.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows, upd = filled(args.rows, args.updates, args.width, args.batch)
    sent = np.arange(args.updates, dtype=np.int64)
    op, seq = np.ones(args.updates, np.int8), sent + 100
    slot_qid = np.full(32, -1, np.int32)
    slot_qid[0] = 7
    q, _sign, s, _match = rows.ordered(sent, op, seq, slot_qid)  # also compiles
    assert (q == 7).all() and np.array_equal(s, np.sort(upd) + 100), "rows out of order"
    for threads in range(1, args.threads + 1):
        numba.set_num_threads(threads)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            rows.ordered(sent, op, seq, slot_qid)
            best = min(best, time.perf_counter() - t0)
        print(f"{args.rows:,} rows of {args.width} vertices over {args.updates:,} updates, "
              f"{threads} threads: {best / args.rows * 1e9:.1f} ns a row "
              f"(best of {args.repeat})")  # fmt: skip


if __name__ == "__main__":
    main()
