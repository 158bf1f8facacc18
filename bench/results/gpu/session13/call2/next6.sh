#!/usr/bin/env bash
# Written in the twelfth session for the next one: branch merge-last's tests. First the new
# test (every last level merged, self-checks on: CHK_MERGE compares each merged window with
# the binary searches), the oracle and long-run tests, then the engine test file as time
# allows (a cold machine needs ~490 s for it: run the rest in a further call if stopped).
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-merge
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-merge >/dev/null 2>&1 || exit 1
cp .devrun/next6.sh $R/
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
T="python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu"
(cd .base-merge && timeout -k 5 240 $T tests/gpu/test_engine_gpu.py -k "merged or walked_together" --durations=5 > $R/merge-tests.log 2>&1)
echo "merge tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/merge-tests.log
(cd .base-merge && timeout -k 5 90 $T tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py > $R/oracle-longrun.log 2>&1)
echo "oracle+long-run rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun.log
(cd .base-merge && timeout -k 5 $(( 585 - $(el) )) $T tests/gpu/test_engine_gpu.py -k "not merged and not walked_together" -x --durations=5 > $R/engine.log 2>&1)
echo "engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine.log
