"""The GPU engine's embeddings-mode decode, timed without a GPU: ns per match record of
``MatchRows.read`` (gpu/rings.py) over an output ring filled as the kernel fills it, and of
``MatchRows.ordered``, which puts the rows in update order and looks up their external ids
on numba's threads.

    python3 -P bench/debug/decode_cost.py [--records 1000000] [--vertices 5] \
        [--graph-vertices 100000] [--repeat 5] [--chunk-rows 1048576] [--reuse]

The ring (2^24 ints, as the engine's) holds ``--records`` complete records of one query of
``--vertices`` vertices, starting at an absolute position near 2^31 (so stamps and ring
positions both wrap on the way); vertex ids are drawn from ``--graph-vertices`` (the
external-id table's size decides how often a lookup misses the cache). Prints the best of
``--repeat`` decodes into fresh chunks and orderings, and checks one against numpy.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from dcsm.gpu.rings import STAMP_MOD, MatchRows

RING = 1 << 24


def fill(records: int, n: int, nv: int, head: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(ring, the records' vertex ids (records, n), the position after the last record)."""
    rng = np.random.default_rng(0)
    verts = rng.integers(0, nv, (records, n)).astype(np.int32)
    size = 3 + n
    pos = head + size * np.arange(records, dtype=np.int64)
    body = np.empty((records, size), np.int64)
    body[:, 0] = pos % STAMP_MOD + 1
    body[:, 1] = np.arange(records)  # tau
    body[:, 2] = 0  # slot
    body[:, 3:] = verts
    where = (pos[:, None] + np.arange(size)) % RING
    ring = np.zeros(RING, np.int32)
    ring[where.ravel()] = body.ravel()
    return ring, verts, head + size * records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--vertices", type=int, default=5, help="of the query")
    ap.add_argument("--graph-vertices", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chunk-rows", type=int, default=1 << 20, help="MatchRows' (the engine's)")
    ap.add_argument(
        "--reuse", action="store_true",
        help="decode every repeat into the first one's chunks (MatchRows.clear keeps one: "
        "give --chunk-rows >= --records), not into new ones",
    )  # fmt: skip
    args = ap.parse_args()
    n = args.vertices
    if args.records * (3 + n) > RING:
        raise SystemExit(f"--records: at most {RING // (3 + n):,} records of {n} vertices fit")
    head = STAMP_MOD - 7 * (3 + n)  # stamps wrap after 7 records, positions at once
    ring, verts, end = fill(args.records, n, args.graph_vertices, head)
    ext = np.arange(args.graph_vertices, dtype=np.int64) * 3 + 1
    nverts = np.array([n], np.int32)
    sent = np.arange(args.records, dtype=np.int64)  # update tau of record tau
    op, seq, qid = np.ones(args.records, np.int8), sent + 1, np.zeros(1, np.int32)
    read_s = order_s = float("inf")
    rows = MatchRows(n, args.chunk_rows)
    for _ in range(args.repeat + 1):  # the first also compiles
        if args.reuse:
            rows.clear()
        else:
            rows = MatchRows(n, args.chunk_rows)
        t0 = time.perf_counter()
        got_head, got = rows.read(ring, head, nverts, 0, args.records)
        t1 = time.perf_counter()
        _q, _sign, _seq, match = rows.ordered(sent, op, seq, qid, ext)
        read_s, order_s = min(read_s, t1 - t0), min(order_s, time.perf_counter() - t1)
    assert (got_head, got) == (end, args.records), (got_head, got)
    assert np.array_equal(match, ext[verts]), "decoded rows differ from the records"
    per = 1e9 / args.records
    print(f"{args.records:,} records of {n} vertices over {args.graph_vertices:,} vertices, "
          f"{numba.get_num_threads()} numba threads: read {read_s * per:.1f} + ordered "
          f"{order_s * per:.1f} ns a record (best of {args.repeat} each)")  # fmt: skip


if __name__ == "__main__":
    main()
