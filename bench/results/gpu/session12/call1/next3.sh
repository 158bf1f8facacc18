#!/usr/bin/env bash
# For the next session (written in the eleventh session): branch tail-acquire (the tail read
# acquiring instead of a system fence in every polling pass). Latency A/B through the knob
# on the branch's code, both values explicit, then test_oracle_gpu.py and test_long_run.py
# at 1, then the engine test file at 1 as time allows (else in its own call). Archive first:
#   git archive --format=tar --prefix=.base-acq/ tail-acquire | tar x && rm -rf .base-acq/bench/results .base-acq/docs
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-acq
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/acq; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/acq .base-acq >/dev/null 2>&1 || exit 1
cp .devrun/next3.sh $R/
export PYTHONPATH=/tmp/acq:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
for v in 1 0 1 0; do
  [ $(el) -gt 250 ] && break
  n=$(ls -d $R/latency-acq$v-*/ 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES=-DTAIL_ACQUIRE=$v timeout -k 5 90 python3 -P bench/gpu_bench.py --out $R/latency-acq$v-$n --data .shdata --skip-search > $R/latency-acq$v-$n.log 2>&1
  echo "latency TAIL_ACQUIRE=$v run $n rc $? at $(el) s" | tee -a $R/time.txt
done
(cd .base-acq && timeout -k 5 60 python3 -P -m pytest tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py -q -p no:cacheprovider --confcutdir=tests/gpu > $R/oracle-longrun.log 2>&1)
echo "oracle+long-run rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun.log
(cd .base-acq && timeout -k 5 $(( 580 - $(el) )) python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu --durations=5 > $R/engine.log 2>&1)
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine.log
