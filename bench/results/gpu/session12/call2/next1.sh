#!/usr/bin/env bash
# For the next session (written 2026-11-28, eleventh session): main with CLOSE_RECHECK 0 by
# default (2b2c23f) was run at 0 only by the latency part, test_oracle_gpu.py and
# test_long_run.py. Here the engine test file at the default (~420 s on a cold machine;
# the suite's own 540 s guard), then, in a second call (next2.sh), the oracle count rows
# with RapidFlow and the 43M triangle and 4-cycle.
# Carry: .devrun .whl-gpu .shdata/oracle-github
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
cp .devrun/next1.sh $R/
export PYTHONPATH=/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
DCSM_RESULTS=$R/engine-tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/engine.log 2>&1
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/engine-tests/gpu-tests.log
