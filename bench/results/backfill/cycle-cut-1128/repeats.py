"""The script behind repeats.txt: five writings of the labelled 6-cycle, each counted three
times on one 10M-edge snapshot (fresh counting structures each time), with the walk that
cheapest_walk chooses. Run from the repository root: python3 -P THIS."""

import json
import sys
import time

sys.path.insert(0, "bench/debug")
from cycle_cut_bench import written  # noqa: E402

from dcsm.engine import cycle_count  # noqa: E402
from dcsm.engine.snapshot import StaticSnapshot  # noqa: E402
from dcsm.loadgen.gen_stream import chunglu_graph  # noqa: E402

snap = StaticSnapshot.from_graph(chunglu_graph(10_000_000, labels=8, seed=0))
nv = snap.num_vertices
counter = cycle_count.path_counter(snap.arrays, nv)
for shift, flip in ((0, False), (1, True), (3, False), (3, True), (5, False)):
    p = written(6, shift, flip)
    walk = cycle_count.cheapest_walk(p, counter)
    ts = []
    for _ in range(3):
        fresh = StaticSnapshot(snap.arrays, nv)
        t = time.perf_counter()
        fresh.run_all(p, emit=False)
        ts.append(round(time.perf_counter() - t, 2))
    print(json.dumps({"pattern": p.name, "walk": walk[0], "seconds": ts}), flush=True)
