#!/usr/bin/env bash
# Written in session 36 for the next one: the engine and oracle GPU tests with the switches
# c1-switches.sh found faster, before they become the defaults. Run as
#   DEFS="-DFIND_ONE_PATH=1 ..." bash bench/results/gpu/session36/next/c2-tests.sh
# Carry: .dev28/common.sh .dev28/shd.tar.xz (.dev28/cupy-cache.tgz.aa only if it fits)
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/next/c2-tests.sh $R/; echo "DEFS=$DEFS" > $R/defs.txt; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
DCSM_KERNEL_DEFINES="$DEFS" DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests ($DEFS) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
