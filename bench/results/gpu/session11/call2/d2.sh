#!/usr/bin/env bash
# Session 11, call 2: branch short-tails (.base-tails). Call 1's short-path selection
# stopped at its 180 s guard after 12 passed (three kernel compiles on a cold machine);
# here the 3 left (test_tails_appended_and_merged), with stacks dumped if one hangs, then
# test_oracle_gpu.py and test_long_run.py, then the oracle count rows beside RapidFlow.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/tails
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/tails .base-tails >/dev/null 2>&1 || exit 1
cp .devrun/d2.sh $R/; nvidia-smi -L > $R/device.txt
cd .base-tails
PYTHONPATH=/tmp/tails:/tmp/site DCSM_SHARED_DATA=$OLDPWD/.shdata timeout -k 5 300 python3 -P -m pytest tests/gpu/test_engine_gpu.py -q \
   -p no:cacheprovider --confcutdir=tests/gpu -o faulthandler_timeout=200 --durations=0 -k "tails_appended" > $R/tails-tests.log 2>&1
echo "tails tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tails-tests.log
PYTHONPATH=/tmp/tails:/tmp/site DCSM_SHARED_DATA=$OLDPWD/.shdata timeout -k 5 $((480 - $(el))) python3 -P -m pytest tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py -q \
   -p no:cacheprovider --confcutdir=tests/gpu --durations=0 > $R/oracle-longrun-tests.log 2>&1
echo "oracle+long-run tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun-tests.log
cd ..
[ $(el) -lt 530 ] && PYTHONPATH=/tmp/tails:/tmp/site timeout -k 5 $((585 - $(el))) python3 -P bench/gpu_bench.py --out $R/oracle-tails --data .shdata \
      --oracle-count-only --skip-latency --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-tails.log 2>&1
echo "oracle tails rc $? at $(el) s" | tee -a $R/time.txt
