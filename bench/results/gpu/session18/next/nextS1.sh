#!/usr/bin/env bash
# Written in the eighteenth session for the next one (not run): chaos on the GPU backend with
# each start's seconds printed as it happens (7260565), to see start by start whether the
# engine's build and the input lease's join overlap (call 2 kept only means; call 5 ran out of
# time before its summary). Then the oracle count rows twice in one process's turns, to see
# whether call 1's 18.7 ms Q_1 deletion10 row comes back (gpu_bench now names, under its table,
# every timed apply that drained to look at the pools, compacted or grew them).
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh bench/results/gpu/session18/next/nextS1.sh .devrun/
#   and a kernel cache of this session (call 2's holds the default kernels) as .devrun/cupy-cache.tgz.aa.
# Carry: .devrun .whl .shdata/oracle-github   (tracked tree ~25 MB + .whl 23 MB + cache 12 MB +
#   oracle-github 9.3 MB: near the limit, which refused 65.4 MB in this session's call 3)
source .devrun/common-nowhl.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/nextS1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.py service/*.py bench/chaos.py > $R/files.md5
export PYTHONPATH=/tmp/m:/tmp/site
timeout -k 5 300 python3 -P bench/chaos.py --kills 4 --updates 10000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^start|differences" $R/chaos-gpu.log | tee -a $R/time.txt
for turn in 1 2; do
  timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle$turn --data .shdata --oracle-count-only --skip-latency > $R/oracle$turn.log 2>&1
  echo "oracle turn $turn rc $? at $(el) s" | tee -a $R/time.txt
done
