#!/usr/bin/env bash
# Session 10, call 5: the short path's cheaper steps (insertion places counted in the merge,
# the edge looked up in the shorter list, both ends' versions found together) on the
# working tree: the engine tests, then the latency part taking turns with HEAD (.base-head),
# then the oracle count rows (RapidFlow beside the new code).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/new /tmp/head
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/head .base-head >/dev/null 2>&1 || exit 1
cp .devrun/c5.sh $R/; git diff > $R/worktree.diff 2>/dev/null; nvidia-smi -L > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/new:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata timeout -k 5 400 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu > $R/engine-tests.log 2>&1
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/engine-tests.log
for b in new head new head; do
  [ $(el) -gt 500 ] && break
  n=$(ls -d $R/latency-$b-* 2>/dev/null | wc -l); n=$((n+1))
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency-$b-$n --data .shdata --skip-search > $R/latency-$b-$n.log 2>&1
  echo "latency $b $n rc $? at $(el) s" | tee -a $R/time.txt
done
[ $(el) -lt 530 ] && PYTHONPATH=/tmp/new:/tmp/site timeout -k 5 50 python3 -P bench/gpu_bench.py --out $R/oracle-new --data .shdata \
      --oracle-count-only --skip-latency --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-new.log 2>&1
echo "oracle new rc $? at $(el) s" | tee -a $R/time.txt
