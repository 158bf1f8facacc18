#!/usr/bin/env bash
# Written in the thirteenth session for the next one: branch gc-eager's SEARCH_WAYS (4 on the
# branch, 2 = main's searches; EXEC_SEARCH_WAYS=2: the updater's four-way, the executor's
# binary) where latency and light rows live, in turns: the response
# part (gpu_bench.py --skip-search, with the sustained row) and the oracle count rows, then
# the oracle count rows at the branch's defaults with RapidFlow beside every row.
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-gc .peers/bin/RapidFlow-native.out
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-gc >/dev/null 2>&1 || exit 1
cp .devrun/nextC.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site
B=.base-gc/bench/gpu_bench.py
for turn in 1 2; do
  for d in "" -DSEARCH_WAYS=2 -DEXEC_SEARCH_WAYS=2; do
    tag=s4; [ "$d" = -DSEARCH_WAYS=2 ] && tag=s2; [ "$d" = -DEXEC_SEARCH_WAYS=2 ] && tag=s4x2
    DCSM_KERNEL_DEFINES=$d timeout -k 5 100 python3 -P $B --out $R/latency-$tag-$turn --data .shdata --skip-search > $R/latency-$tag-$turn.log 2>&1
    echo "latency $tag turn $turn rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency-$tag-$turn/gpu_bench.md | head -4 | cut -c1-170
    DCSM_KERNEL_DEFINES=$d timeout -k 5 60 python3 -P $B --out $R/oracle-$tag-$turn --data .shdata --oracle-count-only --skip-latency > $R/oracle-$tag-$turn.log 2>&1
    echo "oracle $tag turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  done
done
timeout -k 5 $(( 585 - $(el) )) python3 -P $B --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows with RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-rf/gpu_bench.md | tail -2
