#!/usr/bin/env bash
# Written in session 29 for the next one (not run): branch done-lines (DONE_LINES 1 by
# default; session29/call5 measured it) before it merges. Run from a checkout of done-lines.
#  1. the oracle count rows in five turns against DONE_LINES=0 (o), first on the machine:
#     call 5 had the light rows faster in every turn but Q_9 +1 ms in two turns of three;
#     python3 bench/debug/compare_turns.py $R o1 l1 o2 l2 o3 l3 o4 l4 o5 l5;
#  2. the response rows (Done's times are what they measure; the clock check must hold);
#  3. the GPU tests call 5 did not run on it: the other 39 engine tests, test_long_run.py,
#     test_oracle_gpu.py (prewarmed).
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz .dev28/summ.py
source .dev28/common.sh
cp bench/results/gpu/session29/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
for turn in o1 l1 o2 l2 o3 l3 o4 l4 o5 l5; do
  defs=""; [ ${turn:0:1} = o ] && defs="-DDONE_LINES=0"
  DCSM_KERNEL_DEFINES="$defs" PYTHONPATH=/tmp/m timeout -k 5 50 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/resp --data /tmp/shd --skip-search > $R/resp.log 2>&1
echo "response rows rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^\| (DCSM|fixed)" $R/resp/gpu_bench.md | head -14 | tee -a $R/time.txt
export DCSM_SHARED_DATA=/tmp/shd
DCSM_PREWARM=8 DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_long_run.py tests/gpu/test_oracle_gpu.py \
    -k "(test_engine_gpu and not (random_streams or controls_dated or self_checks)) or test_long_run or test_oracle_gpu" > $R/tests.log 2>&1
echo "the other GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
