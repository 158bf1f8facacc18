#!/usr/bin/env bash
# Session 19 call 3: static_count4's register cap. The tree has COUNT4_MIN_BLOCKS 4 (was 3:
# call 2's sweep, 20M Chung-Lu clique4 31.6 against 37.0 ms); 3 is set back through
# $DCSM_STATIC_DEFINES for the A/B (a knob named there wins).
#  1. every 4-vertex search row of citeseer, oracle-github and enron (and their others) at
#     3 and 4 in turns, twice (no CPU, no peers);
#  2. the 20M clique4 at caps 3..6 (.devrun/sweep4.py, one graph, two turns);
#  3. the 20M clique4 at the new default beside gMatch (same call).
# Carry: .devrun .devst   (.devrun/cupy-cache.tgz.aa: call 2's cache)
source .devst/common-st.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s19c3.sh .devrun/sweep4.py $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m:/tmp/site:$PWD
for turn in 1 2; do for mb in 3 4; do
  DCSM_STATIC_DEFINES="-DCOUNT4_MIN_BLOCKS=$mb" timeout -k 5 90 python3 -P bench/static_bench.py --data .devst/sh \
      --sets citeseer,oracle-github,enron --no-cpu --repeat 5 --out $R/sets-mb$mb-$turn.json > $R/sets-mb$mb-$turn.log 2>&1
  echo "sets cap $mb turn $turn rc $? at $(el) s" | tee -a $R/time.txt
done; done
python3 - $R <<'PY' 2>&1 | tee -a $R/time.txt
import json, sys, glob
R = sys.argv[1]
def rows(f):
    return {(r["set"] if "set" in r else r.get("graph"), r["pattern"]): r for r in json.load(open(f))["rows"]}
for turn in (1, 2):
    a, b = rows(f"{R}/sets-mb3-{turn}.json"), rows(f"{R}/sets-mb4-{turn}.json")
    ta = tb = 0.0
    for k in a:
        x, y = a[k].get("gpu_s"), b.get(k, {}).get("gpu_s")
        if x is None or y is None: continue
        ta += x; tb += y
        if a[k].get("count") != b[k].get("count"): print(" COUNT DIFFERS", k)
        if abs(x - y) > 0.0005 and (x > 0.002 or y > 0.002): print(f"  {k}: cap3 {x*1e3:.2f} ms, cap4 {y*1e3:.2f} ms")
    print(f" turn {turn}: {len(a)} rows, cap 3 {ta*1e3:.1f} ms, cap 4 {tb*1e3:.1f} ms")
PY
timeout -k 5 200 python3 -P .devrun/sweep4.py "-DCOUNT4_MIN_BLOCKS=3;-DCOUNT4_MIN_BLOCKS=4;-DCOUNT4_MIN_BLOCKS=5;-DCOUNT4_MIN_BLOCKS=6" clique4 > $R/sweep4.log 2>&1
echo "clique4 caps rc $? at $(el) s" | tee -a $R/time.txt; cut -c1-150 $R/sweep4.log | tee -a $R/time.txt
[ $(el) -lt 480 ] && { timeout -k 5 $(( 570 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes clique4 \
    --no-cpu --peer-limit 40 --gmatch-unlabeled .devst/peers/gmatch-unlabeled --out $R/chunglu-20m-clique4.json > $R/chunglu-20m-clique4.log 2>&1
  echo "clique4 beside gMatch rc $? at $(el) s" | tee -a $R/time.txt; grep -i "clique4" $R/chunglu-20m-clique4.md | tee -a $R/time.txt; }
