#!/usr/bin/env bash
# Session of 2026-11-28 19:20 (ninth), call 2: branch cap16k (batch cap 16,384 by default,
# vertex tables reserved a piece at a time; merged with ring-hubs: 16-bit 4-cycle hub
# counters, as many hubs as the budget holds) -- the GPU suite (tests/gpu but the engine
# tests, then the engine tests), the 20M 4-cycle/diamond A/B (old hubs against the new),
# then the 43M triangle as one 4.3M-update apply. Carry: .devrun .whl-gpu .shdata .peers/bin
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/s2.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
echo "code: $(cat .devrun/head)" | tee $R/time.txt
grep -o -m1 "avx512[a-z]*" /proc/cpuinfo | head -1 > $R/cpu-avx512.txt; lscpu | grep "Model name" >> $R/cpu-avx512.txt
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_RESULTS=$R/rest-tests bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
echo "rest tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/rest-tests/gpu-tests.log
timeout -k 5 100 python3 -P bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
  --variants 512:16:970:0,512:16,512:32:8192 --patterns cycle4,diamond --repeat 2 --phases --out $R/ab-20m.json > $R/ab-20m.log 2>&1
echo "ab 20m rc $? at $(el) s" | tee -a $R/time.txt; tail -8 $R/ab-20m.log
timeout -k 5 80 python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 1 \
  --variants 512:16:970:0,512:16 --patterns cycle4 --repeat 2 --phases --out $R/ab-43m.json > $R/ab-43m.log 2>&1
echo "ab 43m rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/ab-43m.log
DCSM_RESULTS=$R/engine-tests timeout -k 5 $(( 585 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/engine.log 2>&1
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/engine-tests/gpu-tests.log
if [ $(el) -lt 480 ]; then
  timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
  echo "graph 43 at $(el) s" | tee -a $R/time.txt
  timeout -k 5 $(( 590 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 --batch-size 4300000 --out $R/tri-one-apply.json > $R/tri-one-apply.log 2>&1
  echo "triangle one apply rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tri-one-apply.log
fi
