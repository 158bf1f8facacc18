#!/usr/bin/env bash
# Session 36, call 2, on main. Call 1 showed JOB_TRACE=7's chases took no time: the compiler
# had dropped the loads (their result fed only an empty asm). Mended (gtime_after; the loads
# checked in the SASS), and the probe now also times the fences, since every updater fence
# is __threadfence(), a sequentially consistent MEMBAR.SC.GPU:
# 1. JOB_TRACE=7 (histogram rows): segstart = lane 0's chase of 32 head words, count = of 32
#    entries-pool words, verify = one __threadfence(), alloc = one fence.acq_rel.gpu, publish
#    = a classify task's body without its closing fence; classify = the task with it.
#    With SC_FENCES=0 too (the updater's fences acquire-release).
# 2. Turns on the 22 oracle count rows: m (SC_FENCES=1, main's default) against f (0).
# 3. The race hunt with SC_FENCES=0 and self-checks on; then the engine and oracle GPU tests
#    with it, if time is left.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
trace() {  # trace NAME DEFINES QUERY STREAM
  DCSM_KERNEL_DEFINES="$2" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $3 --stream $4 --batch-cap 16384 > $R/trace-$1-$3-$4.txt 2>&1
  echo "$1 ($2) $3 $4 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|step_ns|^  tasks (classify|segstart|count|verify|alloc|publish|seginfo|items)" $R/trace-$1-$3-$4.txt | cut -c1-300 | tee -a $R/time.txt
}
trace jt7 "-DJOB_TRACE=7" Q_1 deletion10
trace jt7 "-DJOB_TRACE=7" Q_7 insertion10
trace jt7f "-DJOB_TRACE=7 -DSC_FENCES=0" Q_1 deletion10
defs() { case $1 in m) echo "";; f) echo "-DSC_FENCES=0";; esac; }
mkdir -p $R/turns
for turn in m1 f1 m2 f2 m3 f3 m4 f4; do
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 90 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mf][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -3 $R/turns.md | tee -a $R/time.txt
timeout -k 5 100 python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget 90 \
    --variant="-DSC_FENCES=0" > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/race.log | tee -a $R/time.txt
left=$(( 570 - $(el) ))
[ $left -gt 200 ] && { DCSM_KERNEL_DEFINES="-DSC_FENCES=0" DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$left DCSM_RESULTS=$R/tests \
    bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
  echo "GPU tests (SC_FENCES=0) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
  grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt; }
