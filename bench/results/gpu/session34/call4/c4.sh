#!/usr/bin/env bash
# Session 34, call 4, on main (the final code): the GPU test files whose code changed since
# they last ran in full: the engine and oracle files (call 3's suite stopped at its time
# limit with 73 passed, none failed), the input ring (its rig's race fixed after call 2) and
# the long run.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session34/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m DCSM_SHARED_DATA=/tmp/shd DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 455 - $(el) )) DCSM_RESULTS=$R/tests \
    bash scripts/gpu-suite.sh --tests tests/gpu/test_input_ring_gpu.py tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py \
    tests/gpu/test_long_run.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
