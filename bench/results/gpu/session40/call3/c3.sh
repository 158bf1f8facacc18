#!/usr/bin/env bash
# Session 40, call 3 (main 65ffa07 and its notes: PUBLISH_LEAN=1, PUBLISH_ALONE=8 by default).
# (1) The two GPU tests call 2's suite had no time left for (312 passed, none failed, cut at
#     test_oracle_embeddings_equal_cpu): both streams' embeddings against the CPU engine.
# (2) Where Q_7 insertion10 and Q_1 deletion10 spend their time with larger pieces and
#     batches: apply_profile at batch_cap 16384 (the default pieces), and 32768 with pieces
#     of 8192 and of 32768 (p's "no gain on Q_7" was never profiled).
# Carry: .dev28/shd.tar.xz (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session40/call3/c3.sh $R/
prewarm "16384|" "32768|"
DCSM_SUITE_SECONDS=240 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_oracle_gpu.py \
    -k test_oracle_embeddings_equal_cpu > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "PASSED|FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
for q in "Q_7 insertion10" "Q_1 deletion10"; do
  set -- $q
  for v in "16384" "32768 --piece 8192" "32768 --piece 32768"; do
    [ $(el) -gt 480 ] && break
    f=$R/prof-$1-$2-$(echo $v | tr -dc 0-9).txt
    timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap $v > $f 2>&1
    echo "apply_profile $1 $2 --batch-cap $v rc $? at $(el) s: $(grep -E '^apply|^timed call' $f | tr '\n' ' ')" | tee -a $R/time.txt
  done
done
