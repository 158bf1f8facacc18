#!/usr/bin/env bash
# Session 36, call 3, on main. Call 2 (JOB_TRACE=7, mended): inside the running kernel a
# dependent load costs 250-500 ns and a fence < 0.5 us, yet a classify task's body takes
# 16-32 us. Its SASS reloads the context's pointers (struct Ctx, in global memory) ~23 times
# (LDG.E.64), and every warp's __threadfence empties the SM's L1, so each reload is an L2
# round trip on the lane's chain. CTX_SHARED=1 reads Ctx from a copy in shared memory.
# 1. Turns on the 22 oracle count rows: m (main), s (CTX_SHARED=1), t (CTX_SHARED=1,
#    MIN_BLOCKS=2: 128 registers, fewer spills, two blocks an SM).
# 2. JOB_TRACE=7 with CTX_SHARED=1: the classify body (publish row) against call 2's 16-32 us.
# 3. The 22 rows beside RapidFlow with CTX_SHARED=1; the race hunt and the engine and oracle
#    GPU tests with it.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
defs() { case $1 in m) echo "";; s) echo "-DCTX_SHARED=1";; t) echo "-DCTX_SHARED=1 -DMIN_BLOCKS=2";; esac; }
mkdir -p $R/turns
for turn in m1 s1 t1 m2 s2 t2 m3 s3 t3 m4 s4; do
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 90 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mst][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
head -2 $R/turns.md | tee -a $R/time.txt; tail -1 $R/turns.md | tee -a $R/time.txt
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=7 -DCTX_SHARED=1" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace7s-$1-$2.txt 2>&1
  echo "JOB_TRACE=7 CTX_SHARED=1 $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|step_ns|^  tasks (classify|segstart|count|verify|publish|seginfo|items)" $R/trace7s-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
DCSM_KERNEL_DEFINES="-DCTX_SHARED=1" timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
    --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "beside RapidFlow (CTX_SHARED=1) rc $? at $(el) s" | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>&1 | tee -a $R/time.txt
timeout -k 5 100 python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget 80 \
    --variant="-DCTX_SHARED=1" > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/race.log | tee -a $R/time.txt
left=$(( 575 - $(el) ))
[ $left -gt 180 ] && { DCSM_KERNEL_DEFINES="-DCTX_SHARED=1" DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$left DCSM_RESULTS=$R/tests \
    bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
  echo "GPU tests (CTX_SHARED=1) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
  grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt; }
