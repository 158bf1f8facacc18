#!/usr/bin/env bash
# Session 37, call 4, the code on main: FIND and COPY in one path (SASS equal to call 2's -D
# build), an apply's first piece of at most 2048 (call 3). (1) Main beside RapidFlow on the
# 22 oracle count rows, same host, same call. (2) The GPU tests but test_oracle_gpu.py (it
# and test_engine_gpu.py passed in call 2 with this kernel; the first piece is host code
# that the engine tests run), in the time left.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/summ.py .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session37/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
    --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>&1 | tee -a $R/time.txt
DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 575 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu --ignore=tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
grep -cE " PASSED" $R/tests/gpu-tests.log | sed 's/^/passed lines: /' | tee -a $R/time.txt
