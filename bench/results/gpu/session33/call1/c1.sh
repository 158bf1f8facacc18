#!/usr/bin/env bash
# Session 33, call 1: session32/next/c1-drain-loop.sh, plus the loop beside RapidFlow (same host, same call).
# Run from a checkout of branch drain-loop. There an unpaced apply's completions are read
# by one numba call on a thread of its own (gpu/drain_thread.py, drain_loop: atomic acquire
# loads of the ring's tau, the GIL released for the whole apply) instead of by the pump
# after the last piece. The light rows are bound by the host, and the drain is ~0.6 ms of a
# 28,900-update row (session32/README.md). Call 3's drain-thread handed drain_done to a
# thread once a piece and lost 40-97 us a piece to the hand-off. In turns, m
# (DCSM_DRAIN_LOOP=0, main's behaviour) against l (the loop), the 22 oracle count rows;
# the timed call's host steps for Q_1 deletion10 and Q_7 insertion10 on both; then the
# engine, oracle and input ring GPU tests with the loop.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session33/call1/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
mkdir -p $R/turns
for turn in m1 l1 l2 m2 m3 l3 l4 m4; do
  [ $(el) -gt 140 ] && break
  DCSM_DRAIN_LOOP=$([ ${turn:0:1} = m ] && echo 0 || echo 1) timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[ml][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for t in $R/turns/[ml][0-9]; do python3 .dev28/summ.py $t | head -1 | sed "s|^|$(basename $t) |"; done | tee -a $R/time.txt
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "loop beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | tee -a $R/time.txt
for v in m l; do
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $row
    DCSM_DRAIN_LOOP=$([ $v = m ] && echo 0 || echo 1) timeout -k 5 40 python3 -P bench/debug/apply_profile.py \
        --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-70); $(grep -E '_settle' $R/prof-$v-$1-$2.txt | head -1)" | tee -a $R/time.txt
  done
done
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py tests/gpu/test_input_ring_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
