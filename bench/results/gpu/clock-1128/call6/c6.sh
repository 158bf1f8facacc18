#!/usr/bin/env bash
# Session 10, call 6: the engine tests call 5 did not reach (its time guard), then the
# oracle and long-run GPU tests, on the working tree of call 5.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
cp .devrun/c6.sh $R/; git diff > $R/worktree.diff 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
export PYTHONPATH=/tmp/new:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
timeout -k 5 170 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu \
  -k "tails_appended_and_merged and 8 or update_slots_wait or graph_larger" > $R/engine-rest.log 2>&1
echo "engine rest rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine-rest.log
timeout -k 5 $((215 - $(el))) python3 -P -m pytest tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py -x -q -p no:cacheprovider --confcutdir=tests/gpu > $R/oracle-long.log 2>&1
echo "oracle+long rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-long.log
