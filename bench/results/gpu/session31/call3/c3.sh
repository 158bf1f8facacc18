#!/usr/bin/env bash
# Session 31, call 3: branch classify-order (FUSE_CLASSIFY_ORDER: J_ORDER classifies, no
# J_CLASSIFY job). The 22 oracle count rows in turns against -DFUSE_CLASSIFY_ORDER=0 (a: the
# job as on main, b: fused), the timed call's updater steps (apply_profile), the race hunt
# (the pool case against the CPU engine; self-checks on, with CHK_CHAIN and CHK_LABEL
# replaying every earlier record of the batch; executors helping and not), then the GPU
# tests. Run from a checkout of classify-order.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session31/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd
mkdir -p $R/turns
for turn in a1 b1 b2 a2 a3 b3 b4 a4; do
  [ $(el) -gt 150 ] && break
  defs=""; [ ${turn:0:1} = a ] && defs="-DFUSE_CLASSIFY_ORDER=0"
  PYTHONPATH=/tmp/m DCSM_KERNEL_DEFINES="$defs" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[ab][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for v in a b; do
  defs=""; [ $v = a ] && defs="-DFUSE_CLASSIFY_ORDER=0"
  for row in "Q_7 insertion10" "Q_1 deletion10"; do
    set -- $row
    PYTHONPATH=/tmp/m DCSM_KERNEL_DEFINES="$defs" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-60)" | tee -a $R/time.txt
  done
done
PYTHONPATH=/tmp/m timeout -k 5 130 python3 -P bench/debug/race_hunt.py --repeat 8 --check --budget 115 \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
