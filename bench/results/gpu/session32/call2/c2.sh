#!/usr/bin/env bash
# Session 32, call 2, on main with job-trace merged and its defaults chosen from call 1
# (MASK_UNROLL 4, READ_JOB 0, PRE_ENT 1; call 1 measured PRE_ENT only beside READ_JOB 1).
# First, in turns, k (call 1's winner: -DPRE_ENT=0) against q (main's default), the 22
# oracle count rows; then main's default beside RapidFlow's median (same host, same call,
# session30/call4's command) for the README's table; then the engine and oracle GPU tests
# on main's default; the race hunt with self-checks in the time left.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session32/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
mkdir -p $R/turns
for turn in k1 q1 q2 k2 k3 q3; do
  [ $(el) -gt 130 ] && break
  DCSM_KERNEL_DEFINES="$([ ${turn:0:1} = k ] && echo -DPRE_ENT=0)" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[kq][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | tee -a $R/time.txt
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 520 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
left=$(( 565 - $(el) ))
[ $left -gt 40 ] && { timeout -k 5 $left python3 -P bench/debug/race_hunt.py --repeat 4 --check --budget $(( left - 10 )) \
    --variant= > $R/race.log 2>&1; echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/race.log | tee -a $R/time.txt; }
