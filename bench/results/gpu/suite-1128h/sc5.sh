#!/usr/bin/env bash
# 2026-11-28 eighth session, the final suite: the GPU suite on main's code (the ring
# counter), both parts in one call: tests/gpu but the engine tests, then the engine tests.
# Carry: .devrun .whl-gpu .shdata.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc5.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
git_head=$(cat .devrun/head 2>/dev/null); echo "code: $git_head" | tee $R/time.txt
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_RESULTS=$R/rest-tests bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
echo "rest tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/rest-tests/gpu-tests.log
DCSM_RESULTS=$R/engine-tests timeout -k 5 $(( 592 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/engine.log 2>&1
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/engine-tests/gpu-tests.log
