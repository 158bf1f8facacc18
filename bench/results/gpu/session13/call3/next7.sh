#!/usr/bin/env bash
# Written in the twelfth session for the next one: main's benchmark with the sustained 1M/s
# row (gpu_bench.py, 3fcf260 on: 200,000 updates at 1M/s; every row's offered rate beside
# its achieved one), the response part alone first, then the oracle count rows with
# RapidFlow. Run it on the code to be merged (main, or main plus merge-last).
# Carry: .devrun .whl-gpu .shdata/oracle-github .peers/bin/RapidFlow-native.out
source .devrun/common.sh
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next7.sh $R/; nvidia-smi -L > $R/device.txt; git log --oneline -1 > $R/code.txt 2>/dev/null
export PYTHONPATH=/tmp/a:/tmp/site
for n in 1 2; do
  timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/latency-$n --data .shdata --skip-search > $R/latency-$n.log 2>&1
  echo "latency $n rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)|sustained" $R/latency-$n/gpu_bench.md | head -4 | cut -c1-160
done
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle.log 2>&1
echo "oracle rows rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle/gpu_bench.md | tail -2
