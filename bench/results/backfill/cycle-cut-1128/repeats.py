import sys, time, json
sys.path.insert(0, "bench/debug")
from cycle_cut_bench import written
from dcsm.engine import cycle_count
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.gen_stream import chunglu_graph
snap = StaticSnapshot.from_graph(chunglu_graph(10_000_000, labels=8, seed=0))
nv = snap.num_vertices
counter = cycle_count.path_counter(snap.arrays, nv)
for shift, flip in ((0, False), (1, True), (3, False), (3, True), (5, False)):
    p = written(6, shift, flip)
    walk = cycle_count.cheapest_walk(p, counter)
    ts = []
    for _ in range(3):
        fresh = StaticSnapshot(snap.arrays, nv)
        t = time.perf_counter(); fresh.run_all(p, emit=False); ts.append(round(time.perf_counter() - t, 2))
    print(json.dumps({"pattern": p.name, "walk": walk[0], "seconds": ts}), flush=True)
