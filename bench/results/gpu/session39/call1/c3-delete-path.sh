#!/usr/bin/env bash
# Written in session 38 (no device time; compiled with nvcc 13.0 for sm_90, never run).
# DELETE_PATH=1 (layout.cuh; updater.cuh apply_deletions): a bulk batch of deletions alone
# takes two jobs before J_ITEMS instead of the pipeline's nine. Session 37's Q_1 deletion10
# profile: ~0.2 ms a batch, its steps halves 27, place 18, order 18.5, classify 49,
# seginfo 33, segedit 18, count 16, items 35 us; the path keeps classify's search, count and
# items. The default build's SASS is unchanged (26b1c4b4...).
# 1. Exactness first: tests/gpu/test_engine_gpu.py -k deletion_batches (the switch on, self-
#    checks on; deletions alone between mixed calls, duplicates either way round, missing
#    edges, unseen vertices, a hub with tails; then a run of deletions alone that must never
#    reach J_SEGINFO), and test_oracle_gpu.py with the switch (embeddings of deletion10
#    equal the CPU engine's).
# 2. Turns of the 22 oracle count rows: m (main) and d (-DDELETE_PATH=1); gpu_bench checks
#    every count against the published one.
# 3. apply_profile of d on Q_1 deletion10: the batches' timeline and steps.
# If d is exact and faster: DELETE_PATH 1 in layout.cuh, then the whole GPU suite.
# Carry: .dev28/shd.tar.xz (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session38/next/c3-delete-path.sh $R/
prewarm "16384|" "16384|-DDELETE_PATH=1"  # the two builds the turns use, side by side
DCSM_RESULTS=$R/tests-del DCSM_SUITE_SECONDS=150 bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k deletion_batches > $R/tests-del.log 2>&1
echo "deletion tests rc $? at $(el) s: $(tail -1 $R/tests-del/gpu-tests.log)" | tee -a $R/time.txt
DCSM_KERNEL_DEFINES=-DDELETE_PATH=1 DCSM_RESULTS=$R/tests-oracle DCSM_SUITE_SECONDS=150 bash scripts/gpu-suite.sh \
    --tests tests/gpu/test_oracle_gpu.py > $R/tests-oracle.log 2>&1
echo "oracle tests (d) rc $? at $(el) s: $(tail -1 $R/tests-oracle/gpu-tests.log)" | tee -a $R/time.txt
defs() { case $1 in m) echo "";; d) echo "-DDELETE_PATH=1";; esac; }
mkdir -p $R/turns-del
for turn in m1 d1 m2 d2 m3 d3 m4 d4 m5 d5; do
  [ $(el) -gt 480 ] && break
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns-del/$turn \
      --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns-del/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns-del $(ls -d $R/turns-del/[md][0-9] | xargs -n1 basename) > $R/turns-del.md 2>&1
cat $R/turns-del.md | tee -a $R/time.txt
DCSM_KERNEL_DEFINES=-DDELETE_PATH=1 timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query Q_1 \
    --stream deletion10 --batch-cap 16384 > $R/profd-Q_1-deletion10.txt 2>&1
echo "apply_profile (d) rc $? at $(el) s" | tee -a $R/time.txt
grep -E "^apply|timed call|step_ns" $R/profd-Q_1-deletion10.txt | tee -a $R/time.txt
