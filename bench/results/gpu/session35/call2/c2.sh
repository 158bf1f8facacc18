#!/usr/bin/env bash
# Session 35, call 2, on branch sw35: three switches that give a lane's serial chain of
# dependent loads memory-level parallelism, in the updater jobs whose tasks call 1's
# JOB_TRACE=2 found uniformly slow (not one slow task: most classify tasks 16-33 us, most
# items tasks 32-65 us on Q_1 deletion10):
#   ITEM_CHECKS 8 (J_ITEMS: a lane's item slots checked 8 at a time, not one round trip each),
#   SEG_LOADS 8 (J_SEGINFO: a lane's small segment walked 8 half edges a load round),
#   CLASSIFY_ONE_FIND 1 (J_CLASSIFY: both half edges' lanes search their lists in one call).
# Turns on the 22 oracle count rows: m (all three off = main's code), a (all on, the branch's
# default), i / s / c (one on). Then JOB_TRACE=2 of a on two rows, then the engine and
# oracle GPU tests on the branch's default build.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
source .dev28/common.sh
cp bench/results/gpu/session35/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
defs() { case $1 in
  m) echo "-DITEM_CHECKS=0 -DSEG_LOADS=0 -DCLASSIFY_ONE_FIND=0";; a) echo "";;
  i) echo "-DSEG_LOADS=0 -DCLASSIFY_ONE_FIND=0";; s) echo "-DITEM_CHECKS=0 -DCLASSIFY_ONE_FIND=0";;
  c) echo "-DITEM_CHECKS=0 -DSEG_LOADS=0";; esac; }
mkdir -p $R/turns
for turn in m1 a1 i1 s1 c1 m2 a2 i2 s2 c2 m3 a3; do
  [ $(el) -gt 260 ] && break
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 60 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[maisc][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -3 $R/turns.md | tee -a $R/time.txt
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=2" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace-$1-$2.txt 2>&1
  echo "trace $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "step_ns|^  tasks (classify|seginfo|items)" $R/trace-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
