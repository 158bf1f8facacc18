#!/usr/bin/env bash
# Written in session 31 for the next one (not run): branch mask-unroll gives J_MASK its own
# chunks per task (MASK_UNROLL 4) while J_COPY keeps COPY_UNROLL 1. At 1 (main) J_MASK took
# 40 against 24 us a batch of Q_7 insertion10 (session31/call5), and the light insertion
# rows lost ~3 % to COPY_UNROLL 4's. -DMASK_UNROLL=1 compiles to main's sm_90 cubin, so m
# below is main. In turns: m (main) and k (the branch), the 22 oracle count rows; Q_7
# insertion10's steps; the race hunt with self-checks; the engine and oracle GPU tests.
# Then, if k wins: merge it, and run bench/gpu_bench.py beside RapidFlow on main (session30
# call4's command) for the README's table. Run from a checkout of mask-unroll.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/cupy-cache.tgz.ab .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session31/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
mkdir -p $R/turns
for turn in m1 k1 k2 m2 m3 k3 k4 m4; do
  defs=""; [ ${turn:0:1} = m ] && defs="-DMASK_UNROLL=1"
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns m1 k1 k2 m2 m3 k3 k4 m4 > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for v in m k; do
  defs=""; [ $v = m ] && defs="-DMASK_UNROLL=1"
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query Q_7 --stream insertion10 --batch-cap 16384 > $R/prof-$v-Q_7-insertion10.txt 2>&1
  echo "profile $v rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-Q_7-insertion10.txt | cut -c1-60)" | tee -a $R/time.txt
done
timeout -k 5 100 python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget 85 \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
