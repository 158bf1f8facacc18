#!/usr/bin/env bash
# Session 40, call 2: PUBLISH_LEAN=1 and PUBLISH_ALONE=8 as the defaults (call 1's turns:
# 177.97 against 182.52 ms for the 22 oracle count rows, every light insertion row lower;
# race hunt with self-checks 0 of 3 wrong). Code: the prototype's LEAN part, rewritten.
# (1) Main beside RapidFlow on the 22 oracle count rows, same host, same call.
# (2) The whole GPU suite, oracle tests included, in the time left.
# Carry: .dev28/shd.tar.xz .peers/bin/RapidFlow.out (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session40/call2/c2.sh $R/
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
    --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
grep -E "^\| (oracle|all)" $R/oracle-rf/gpu_bench.md | cut -d"|" -f3-5,8-10 | head -40 | tee -a $R/time.txt
DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 585 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu \
    > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
grep -cE " PASSED" $R/tests/gpu-tests.log | sed 's/^/passed lines: /' | tee -a $R/time.txt
