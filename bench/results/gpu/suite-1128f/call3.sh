#!/usr/bin/env bash
# Session of 2026-11-28 11:52 (sixth), call 3: the whole GPU suite on the final code (the
# engine tests, then the rest of tests/gpu), each part with its own results folder.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
export PYTHONPATH=/tmp/new:/tmp/site
cp .devrun/call3.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/engine-tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/engine.log 2>&1
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine-tests/gpu-tests.log
DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/rest-tests timeout -k 5 $(( 590 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
echo "rest tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/rest-tests/gpu-tests.log
