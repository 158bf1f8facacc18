#!/usr/bin/env bash
# Session 32, call 3, on branch drain-thread: between two pieces of an apply a thread reads
# the completions that have come (GpuEngine._drain_ahead; drain_done releases the GIL),
# beside the next piece's admission, rather than the pump after the last piece (~21 ns an
# update on this host: ~0.6 ms of a light row's ~2.2, call 2's profiles). In turns, m
# (DCSM_DRAIN_AHEAD=0, main's behaviour) against d (the branch), the 22 oracle count rows;
# the timed call's host steps for Q_1 deletion10 and Q_7 insertion10 on both; then the
# engine and oracle GPU tests on d.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session32/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
mkdir -p $R/turns
for turn in m1 d1 d2 m2 m3 d3 d4 m4; do
  [ $(el) -gt 130 ] && break
  DCSM_DRAIN_AHEAD=$([ ${turn:0:1} = m ] && echo 0 || echo 1) timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[md][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for v in m d; do
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $row
    DCSM_DRAIN_AHEAD=$([ $v = m ] && echo 0 || echo 1) timeout -k 5 40 python3 -P bench/debug/apply_profile.py \
        --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-70); $(grep -E '_settle' $R/prof-$v-$1-$2.txt | head -1)" | tee -a $R/time.txt
  done
done
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
