"""bench/debug/working_set.py, the host-side count of what a scale-up insertion's kernel
batches copy, run as a script on a small graph and checked against a direct count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from dcsm.graphio import write_graph
from dcsm.loadgen.gen_stream import chunglu_graph

ROOT = Path(__file__).resolve().parents[2]


def test_working_set_counts_every_batch_and_the_final_lists(tmp_path: Path) -> None:
    g = chunglu_graph(20_000, 2_222, gamma=2.3, seed=3)
    write_graph(tmp_path / "g.npz", g)
    out = tmp_path / "ws.json"
    subprocess.run([sys.executable, "-P", str(ROOT / "bench/debug/working_set.py"), "--graph",
                    str(tmp_path / "g.npz"), "--batch", "256", "--out", str(out)],
                   check=True, capture_output=True, timeout=120)  # fmt: skip
    got = json.loads(out.read_text())
    assert got["updates"] == 2_000 and got["batches"] == 8  # 10 % of the edges, 256 a batch
    # Every edge is in the graph at the end: the lists are the full graph's.
    _ids, deg = np.unique(np.concatenate([g.src, g.dst]), return_counts=True)
    runs = 1 << np.ceil(np.log2(np.maximum(1, (deg + 31) // 32))).astype(np.int64)
    assert got["live_slabs_after"] == int(runs.sum())
    assert got["live_slabs_before"] <= got["live_slabs_after"]
    # A batch writes at least one slab a vertex it touches; the delta layout never more.
    assert got["new_run_slabs_total"] >= got["batches"] * (got["touched_per_batch"] - 1)
    assert 0 < got["delta_layout_slabs_total"] <= got["new_run_slabs_total"]
    # Runs held while batches are in flight: more with more in flight, fewer with deltas.
    two, four = got["held_slabs_2_in_flight"], got["held_slabs_4_in_flight"]
    assert 0 < two["whole_lists"] <= four["whole_lists"] <= got["new_run_slabs_total"]
    assert two["delta_layout"] <= two["whole_lists"] and four["delta_layout"] <= four["whole_lists"]
