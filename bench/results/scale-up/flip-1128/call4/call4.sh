#!/usr/bin/env bash
# Session of 2026-11-28 11:52 (sixth), call 4: main with the flipped orientations (277dbf4)
# on the 43M graph: the 4-cycle insertion at larger batch caps (the default
# 4,096 ran in call 2: 205,609/s): first the oracle count rows at caps 4,096 and 16,384, then
# the 4-cycle at 16,384, the triangle row of issue 17 (cap 16,384, churn 1), and the 4-cycle
# at 32,768 if time is left.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
export PYTHONPATH=/tmp/new:/tmp/site
cp .devrun/call4.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
for cap in 4096 16384; do
  timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-cap$cap --data .shdata --oracle-count-only --skip-latency \
      --batch-cap $cap > $R/oracle-cap$cap.log 2>&1
  echo "oracle cap $cap rc $? at $(el) s" | tee -a $R/time.txt
done
timeout 80 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
for cap in 16384; do
  timeout -k 5 100 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns 4cycle \
      --engine batch_cap=$cap --out $R/c4-43m-cap$cap.json > $R/c4-43m-cap$cap.log 2>&1
  echo "4cycle cap $cap rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/c4-43m-cap$cap.log
done
[ $(el) -lt 230 ] && timeout -k 5 $(( 300 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
    --patterns triangle --churn 1 --engine batch_cap=16384 --out $R/triangle-43m.json > $R/triangle-43m.log 2>&1
echo "triangle rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/triangle-43m.log
[ $(el) -lt 230 ] && timeout -k 5 $(( 300 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns 4cycle \
    --engine batch_cap=32768 --out $R/c4-43m-cap32768.json > $R/c4-43m-cap32768.log 2>&1
echo "4cycle cap 32768 rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/c4-43m-cap32768.log
