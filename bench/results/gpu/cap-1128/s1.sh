#!/usr/bin/env bash
# Session of 2026-11-28 19:20 (ninth), call 1: batch cap and update slots, A/B on main's
# code: oracle-github count rows beside RapidFlow at batch caps 4,096 / 16,384 / 32,768
# (issue 13), then the 43M triangle insertion + deletion (issue 17) at cap 16,384 with
# 1M-update applies (the recorded row) against one 4.3M-update apply (GAMMA's single 10 %
# batch), cap 32,768, and 131,072 update slots.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/main; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/main:/tmp/site
cp .devrun/s1.sh $R/; git log --oneline -1 > $R/commit.txt 2>/dev/null
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
for i in 1 2; do for cap in 4096 16384 32768; do
  [ $(el) -gt 150 ] && break
  RF=""; [ $i = 1 ] && RF="--rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15"
  timeout -k 5 90 python3 -P bench/gpu_bench.py --out $R/oracle-$cap-$i --data .shdata --oracle-count-only --skip-latency --batch-cap $cap $RF > $R/oracle-$cap-$i.log 2>&1
  echo "oracle cap $cap round $i rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-$cap-$i/gpu_bench.md | tail -1
done; done
timeout 70 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
run() {  # name, extra args
  local n=$1; shift
  [ $(el) -gt 480 ] && return
  timeout -k 5 $(( 540 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 "$@" --out $R/tri-$n.json > $R/tri-$n.log 2>&1
  echo "triangle $n rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tri-$n.log
}
run c16k-b1m --engine batch_cap=16384
run c16k-b4m --engine batch_cap=16384 --batch-size 4300000
run c32k-b4m --engine batch_cap=32768 --batch-size 4300000
run c16k-u128k-b4m --engine batch_cap=16384 --engine maxu=131072 --batch-size 4300000
run c32k-u128k-b4m --engine batch_cap=32768 --engine maxu=131072 --batch-size 4300000
