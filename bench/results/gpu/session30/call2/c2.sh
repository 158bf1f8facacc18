#!/usr/bin/env bash
# Session 30, call 2: branch light as built (the mirror copy and DONE_LINES on), before it
# merges: the GPU tests (tests/gpu/test_input_ring_gpu.py, every engine test,
# test_long_run.py, test_oracle_gpu.py; prewarmed), the race hunt (the pool case against the
# CPU engine, self-checks on and off, executors helping and not), the response rows (Done's
# times are what they read).
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session30/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd
DCSM_PREWARM=8 DCSM_SUITE_SECONDS=340 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_input_ring_gpu.py tests/gpu/test_engine_gpu.py tests/gpu/test_long_run.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 110 python3 -P bench/debug/race_hunt.py --repeat 8 --check --budget 95 \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -6 $R/race.log | tee -a $R/time.txt
[ $(el) -lt 480 ] && { PYTHONPATH=/tmp/m timeout -k 5 $(( 585 - $(el) )) python3 -P bench/gpu_bench.py --out $R/resp --data /tmp/shd --skip-search > $R/resp.log 2>&1
echo "response rows rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^\| (DCSM|fixed|[0-9])" $R/resp/gpu_bench.md | head -12 | tee -a $R/time.txt; }
