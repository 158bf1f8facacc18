#!/usr/bin/env bash
# Session 17 call 5: main (ff2d521), the service on the GPU backend:
#  1. scripts/service-bench.sh (dcsm loadgen --embedded, binary encoding) at 10K and 100K/s;
#  2. bench/chaos.py: 6 kill -9s of the service on the GPU backend, deltas compared.
# Carry: .devrun .whl
source .devrun/common-nowhl.sh
cp .devrun/s17c5.sh $R/; nvidia-smi -L > $R/device.txt; cat .devrun/head > $R/head.txt
timeout -k 5 200 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy 10000,100000 > $R/svc.log 2>&1
echo "service-bench rc $? at $(el) s" | tee -a $R/time.txt
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/a:/tmp/site
left=$(( 560 - $(el) ))
timeout -k 5 $left python3 -P bench/chaos.py --kills 6 --updates 15000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/chaos-gpu.log | tee -a $R/time.txt
