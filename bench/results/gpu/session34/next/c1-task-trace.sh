#!/usr/bin/env bash
# Written in session 34 for the next one (no device time was left to run it). On main.
# JOB_TRACE=2 (State.task_hist, task_slowest_ns; appended to State after session 34's last
# device call, offsets checked by tests/engine/test_gpu_layout.py with nvcc, never run on a
# device): each updater task's own time, by job kind and by runner (helper or updater
# warp), for three rows whose jobs' tails (session 32: classify 38.6, seginfo 28.9, items
# 24.2 us a batch on Q_1 deletion10) set a light row's time. Is a tail one slow task (a hub:
# split it) or many (the runners: helpers slowed by their SM's other warps)? Then the engine
# and oracle GPU tests on the default build, which the appended fields must leave exact.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session34/next/c1-task-trace.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for row in "Q_1 deletion10" "Q_7 insertion10" "Q_9 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=2" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace-$1-$2.txt 2>&1
  echo "trace $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "trace us/batch|^  tasks " $R/trace-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
