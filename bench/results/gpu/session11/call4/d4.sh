#!/usr/bin/env bash
# Session 11, call 4: main with short-tails merged plus the CLOSE_RECHECK knob (default 1,
# as before). The GPU suite but the engine tests (static, oracle, long run, ...); then the
# latency part taking turns between CLOSE_RECHECK 0 (a due batch closes without reading the
# host's tail once more) and 1; the oracle and long-run tests at 0; then the chaos run on
# the GPU backend (kill -9 of the service, 6 times).
# Carry: .devrun .whl .whl-gpu .shdata/oracle-github .shdata/citeseer
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl .whl-gpu/pytest_asyncio*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/d4.sh $R/; git diff > $R/worktree.diff 2>/dev/null
export PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
echo "code: $(cat .devrun/head) + worktree.diff" | tee $R/time.txt
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_RESULTS=$R/rest-tests timeout -k 5 230 bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
echo "rest tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/rest-tests/gpu-tests.log
for v in 0 1 0 1; do
  [ $(el) -gt 360 ] && break
  n=$(ls -d $R/latency-recheck$v-*/ 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES=-DCLOSE_RECHECK=$v timeout -k 5 90 python3 -P bench/gpu_bench.py --out $R/latency-recheck$v-$n --data .shdata --skip-search > $R/latency-recheck$v-$n.log 2>&1
  echo "latency CLOSE_RECHECK=$v run $n rc $? at $(el) s" | tee -a $R/time.txt
done
DCSM_KERNEL_DEFINES=-DCLOSE_RECHECK=0 timeout -k 5 60 python3 -P -m pytest tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py -q \
   -p no:cacheprovider --confcutdir=tests/gpu > $R/oracle-longrun-recheck0.log 2>&1
echo "oracle+long-run at CLOSE_RECHECK=0 rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun-recheck0.log
left=$(( 575 - $(el) ))
[ $left -gt 120 ] && { timeout -k 5 $left python3 -P bench/chaos.py --kills 6 --updates 15000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
  echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/chaos-gpu.log; }
