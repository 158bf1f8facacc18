#!/usr/bin/env bash
# Session 35, call 1, on main. The checkout of this session had lost session 34's branch
# `item-checks` and the carried files; they were rebuilt (.dev28/common.sh =
# ../../session17/common-nowhl.sh with .dev28 for .devrun; shd.tar.xz = ../shared/data;
# RapidFlow built as in session 22), with a cold kernel cache, which comes back for later calls.
# 1. JOB_TRACE=2 (merged in session 34, never run on a device) on three light rows.
# 2. The 22 oracle count rows beside RapidFlow on this host (the baseline for this session).
# 3. The engine and oracle GPU tests with what time is left.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .peers/bin/RapidFlow.out
source .dev28/common.sh
cp bench/results/gpu/session35/call1/c1.sh $R/; nvidia-smi -L > $R/device.txt; nproc > $R/nproc.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for row in "Q_1 deletion10" "Q_7 insertion10" "Q_9 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=2" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace-$1-$2.txt 2>&1
  echo "trace $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "trace us/batch|^  tasks " $R/trace-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
timeout -k 5 200 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>&1 | tee -a $R/time.txt
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 540 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
