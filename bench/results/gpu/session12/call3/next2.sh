#!/usr/bin/env bash
# For the next session (eleventh session's follow-up): main at CLOSE_RECHECK 0, the oracle
# count rows with RapidFlow beside, the latency part, then the 43M triangle and 4-cycle.
# Carry: .devrun .whl-gpu .shdata/oracle-github .peers/bin/RapidFlow-native.out
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next2.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle --data .shdata --oracle-count-only \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle.log 2>&1
echo "oracle rows + latency rc $? at $(el) s" | tee -a $R/time.txt; grep -A5 "### Totals" $R/oracle/gpu_bench.md | tail -2
timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
for p in triangle triangle 4cycle; do
  [ $(el) -gt 420 ] && break
  n=$(ls $R/$p-*.json 2>/dev/null | wc -l); n=$((n + 1))
  timeout -k 5 $(( 575 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns $p $([ $p = triangle ] && echo --churn 1) --batch-size 1048576 --out $R/$p-$n.json > $R/$p-$n.log 2>&1
  echo "$p $n rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/$p-$n.log
done
