#!/usr/bin/env bash
# Session 17 call 6: branch small-model (f2c0d8f: the short path's cost model with a fixed
# part a batch) against main (ff2d521):
#  1. the branch's short-path, random-stream and updater-warp engine tests, and the oracle tests;
#  2. response rows (gpu_bench.py --skip-search --sustain-updates 0), main / branch in turns.
# Prepare: git archive --format=tar --prefix=.base-sm/ small-model | tar x && rm -rf .base-sm/bench/results .base-sm/docs
# Carry: .devrun .whl-gpu .base-sm .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/m /tmp/sm
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/sm .base-sm >/dev/null 2>&1 || exit 1
cp .devrun/s17c6.sh $R/; nvidia-smi -L > $R/device.txt
export DCSM_SHARED_DATA=$PWD/.shdata
( cd .base-sm && PYTHONPATH=/tmp/sm:/tmp/site timeout -k 5 120 python3 -P -m pytest tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py \
    -k "short_path or random_streams or several_updater or oracle" -q -p no:cacheprovider --confcutdir=tests/gpu ) > $R/tests-sm.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests-sm.log)" | tee -a $R/time.txt
for run in "sm 1" "m 1" "sm 2" "m 2" "sm 3" "m 3"; do
  set -- $run; [ $(el) -gt 225 ] && break
  B=$([ $1 = sm ] && echo .base-sm/bench || echo bench)
  PYTHONPATH=/tmp/$1:/tmp/site timeout -k 5 45 python3 -P $B/gpu_bench.py --out $R/lat-$1-$2 --data .shdata \
      --skip-search --sustain-updates 0 > $R/lat-$1-$2.log 2>&1
  echo "latency $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep "t=0)" $R/lat-$1-$2/gpu_bench.md | tee -a $R/time.txt
done
