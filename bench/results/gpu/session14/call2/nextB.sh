#!/usr/bin/env bash
# Written in the thirteenth session for the next one: branch gc-eager's tests (the cubin
# changes, so every config is built cold, ~485 s for the engine test file): the engine test
# file, then the oracle and long-run tests as time allows (else in nextC.sh's call).
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-gc
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-gc >/dev/null 2>&1 || exit 1
cp .devrun/nextB.sh $R/
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
T="python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu"
(cd .base-gc && timeout -k 5 540 $T tests/gpu/test_engine_gpu.py --durations=5 > $R/engine.log 2>&1)
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine.log
[ $(el) -lt 520 ] && (cd .base-gc && timeout -k 5 $(( 585 - $(el) )) $T tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py > $R/oracle-longrun.log 2>&1)
echo "oracle+long-run rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun.log 2>/dev/null
