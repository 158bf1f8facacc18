#!/usr/bin/env bash
# Session 18 call 1: main (13d1f5f), the final code of session 17 (f17.sh of session 17 call 3, as it was):
#  1. the whole GPU suite (tests/gpu) at the defaults, its kernel cache warm from calls 1-2 (main's kernels), any cold config filled first by
#     12 shards side by side (DCSM_PREWARM);
#  2. the oracle count rows with RapidFlow beside each on this host;
#  3. the response part (gpu_bench.py --skip-search), the sustained 1M/s row's paced pieces
#     of 4,096 (b0a4dce) included.
# Carry: .devrun .whl-gpu .shdata/oracle-github .shdata/citeseer .peers/bin/RapidFlow-native.out
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/f18.sh $R/; nvidia-smi -L > $R/device.txt; git log -1 --format=%H > $R/head.txt 2>/dev/null
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
DCSM_PREWARM=12 DCSM_RESULTS=$R/suite timeout -k 5 480 bash scripts/gpu-suite.sh --tests tests/gpu > $R/suite.log 2>&1
echo "GPU suite rc $? at $(el) s: $(tail -1 $R/suite/gpu-tests.log)" | tee -a $R/time.txt
[ $(el) -lt 545 ] && { timeout -k 5 $(( 570 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
  echo "oracle with RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-rf/gpu_bench.md | tail -2; }
[ $(el) -lt 540 ] && { timeout -k 5 $(( 580 - $(el) )) python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search > $R/latency.log 2>&1
  echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -4 | cut -c1-120; }
