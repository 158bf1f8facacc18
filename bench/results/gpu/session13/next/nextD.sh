#!/usr/bin/env bash
# Written in the thirteenth session for the next one: on the code to be merged (main with
# gc-eager merged, its defaults as the A/B chose): the oracle and long-run tests, then the
# response part with the sustained row.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/nextD.sh $R/; nvidia-smi -L > $R/device.txt; git log --oneline -1 > $R/code.txt 2>/dev/null
export PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
timeout -k 5 120 python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py > $R/oracle-longrun.log 2>&1
echo "oracle+long-run rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/oracle-longrun.log
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -4 | cut -c1-170
