#!/usr/bin/env bash
# Written in the thirteenth session for the next one, if device time is left: branch
# gc-eager's static matcher at SEARCH_WAYS 4 against 2 (its default there), in turns, on
# citeseer and enron and a 20M-edge Chung-Lu graph (triangle, 4-clique: the search path).
# A win means flipping static_match.cu's default and running tests/gpu's static tests.
# Carry: .devrun .whl-gpu .shdata/citeseer .shdata/enron .base-gc
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-gc >/dev/null 2>&1 || exit 1
cp .devrun/nextE.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site
S=.base-gc/bench/static_bench.py
for turn in 1 2; do
  for w in 4 2; do
    [ $(el) -gt 420 ] && break 2
    DCSM_STATIC_DEFINES=-DSEARCH_WAYS=$w timeout -k 5 150 python3 -P $S --data .shdata --sets citeseer,enron --no-cpu \
        --out $R/sets-w$w-$turn.json > $R/sets-w$w-$turn.log 2>&1
    echo "sets ways $w turn $turn rc $? at $(el) s" | tee -a $R/time.txt
    DCSM_STATIC_DEFINES=-DSEARCH_WAYS=$w timeout -k 5 150 python3 -P $S --sets "" --chunglu-edges 20000000 \
        --chunglu-shapes triangle,clique4 --no-cpu --search --out $R/cl20-w$w-$turn.json > $R/cl20-w$w-$turn.log 2>&1
    echo "chung-lu 20M ways $w turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  done
done
