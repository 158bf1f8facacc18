#!/usr/bin/env bash
# Session 31, call 5: branch copy-unroll, the other way. Call 4: J_COPY took 105 / 235 / 576
# us a batch of Q_7 insertion10 at COPY_UNROLL 4 / 8 / 16, so the job waits for its longest
# task (a hub's chunks: each entry of a two-run list searches the other run), not for the
# count of tasks. Here COPY_UNROLL 1 and 2 against 4: Q_7 insertion10's steps, the 22 oracle
# count rows in turns (p: 4, s: 2, t: 1); then the winner (the smallest total) becomes the
# default in this copy of the tree (sed; its md5 in files-tested.md5) for the race hunt with
# self-checks and the engine and oracle GPU tests. Run from a checkout of copy-unroll.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/cupy-cache.tgz.ab .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session31/call5/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd
for u in 1 2 4; do
  PYTHONPATH=/tmp/m DCSM_KERNEL_DEFINES="-DCOPY_UNROLL=$u" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query Q_7 --stream insertion10 --batch-cap 16384 > $R/prof-u$u-Q_7-insertion10.txt 2>&1
  echo "profile u$u rc $? at $(el) s: $(grep -E '^apply:' $R/prof-u$u-Q_7-insertion10.txt | cut -c1-60)" | tee -a $R/time.txt
  grep -E "step_ns" $R/prof-u$u-Q_7-insertion10.txt | cut -c1-200 | tee -a $R/time.txt
done
mkdir -p $R/turns
for turn in p1 s1 t1 t2 s2 p2; do  # p: COPY_UNROLL 4, s: 2, t: 1
  case ${turn:0:1} in p) u=4;; s) u=2;; t) u=1;; esac
  PYTHONPATH=/tmp/m DCSM_KERNEL_DEFINES="-DCOPY_UNROLL=$u" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns p1 s1 t1 t2 s2 p2 > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
# the winner: the variant with the smallest total (columns p, s, t in that order)
W=$(tail -1 $R/turns.md | awk -F'|' '{a=$5+0; b=$6+0; c=$7+0; w=4; m=a; if (b<m) {w=2; m=b}; if (c<m) {w=1}; print w}')
echo "winner COPY_UNROLL=$W at $(el) s" | tee -a $R/time.txt
sed -i "s/^#define COPY_UNROLL 4$/#define COPY_UNROLL $W/" gpu/updater_jobs.cuh
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-tested.md5; grep -n "define COPY_UNROLL" gpu/updater_jobs.cuh | tee -a $R/time.txt
rm -rf /tmp/m2; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m2 . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m2 timeout -k 5 90 python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget 75 \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt
PYTHONPATH=/tmp/m2 DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 425 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
