"""Session 19: the 20M Chung-Lu 4-clique count under several static_match.cu knobs, one
process, the graph generated once; each config gets a fresh StaticMatcher (module compiled
with $DCSM_STATIC_DEFINES) and its own CSR. Prints one JSON line per config. (The script
that ran in calls 2 and 3 as .devrun/sweep4.py, formatted for the repository's lint.)"""

import json
import os
import sys
import time

sys.path.insert(0, "bench")
import static_bench as sb

import dcsm.gpu.static_match as sm
from dcsm.loadgen.gen_stream import chunglu_graph

configs = sys.argv[1].split(";")
shapes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["clique4"]
t = time.perf_counter()
g = chunglu_graph(20_000_000, seed=0)
print(f"# graph {g.num_vertices} v {g.num_edges} e in {time.perf_counter() - t:.1f} s", flush=True)
for turn in range(2):
    for cfg in configs:
        os.environ["DCSM_STATIC_DEFINES"] = cfg
        sm.load_module.cache_clear()
        m = sm.StaticMatcher()
        csr = m.csr_from_edges(
            g.num_vertices, g.src, g.dst, g.edge_labels, g.vertex_labels, g.vertex_ids
        )
        for name in shapes:
            p = sb.shape(name)
            m.count(csr, p)  # warm (compile)
            times, count = [], None
            for _ in range(7):
                t = time.perf_counter()
                count = m.count(csr, p)
                times.append(time.perf_counter() - t)
            print(
                json.dumps(
                    {
                        "turn": turn,
                        "defines": cfg,
                        "shape": name,
                        "count": count,
                        "best_s": round(min(times), 5),
                        "median_s": round(sorted(times)[3], 5),
                    }
                ),
                flush=True,
            )
        del csr, m
