#!/usr/bin/env bash
# Session 17 call 4: main (ff2d521), the search part of the benchmark in full (oracle-github
# count and embedding, enron labeled5 and unlabeled) with RapidFlow beside every row on this
# host (limit 15 s a row; a row stopped there is recorded as timed out).
# Carry: .devrun .shdata/oracle-github .shdata/enron/labeled5 .shdata/enron/unlabeled .peers/bin/RapidFlow-native.out
source .devrun/common-nowhl.sh; mkdir -p /tmp/site
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s17c4.sh $R/; nvidia-smi -L > $R/device.txt; cat .devrun/head > $R/head.txt
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
timeout -k 5 540 python3 -P bench/gpu_bench.py --out $R/search-rf --data .shdata --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/search-rf.log 2>&1
echo "search with RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; grep -A8 "### Totals" $R/search-rf/gpu_bench.md | tee -a $R/time.txt
