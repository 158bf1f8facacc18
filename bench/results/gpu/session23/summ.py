"""One line per oracle run: total, the light rows, and the updater's steps a batch."""

import json
import sys

j = json.load(open(sys.argv[1] + "/gpu_bench.json"))
r = [x for x in j["search"] if x["query"] != "all at once"]
eq = sum(x.get("peer_matches") == x["matches"] for x in j["search"])
light = [round(1e3 * x["seconds"], 2) for x in r if x["query"] in ("Q_1", "Q_5", "Q_7", "Q_10")]
print(f"   {len(r)} rows {sum(x['seconds'] for x in r):.4f} s; equal {eq}; light ms {light}")
for u in j.get("updater", []):
    steps = {k[5:-3]: round(v, 1) for k, v in u.items() if k.startswith("step_") and v}
    print(f"   {u['stream']}: batches {u['batches']:.0f} mean {u['mean_batch']:.0f}; {steps}")
