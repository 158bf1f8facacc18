#!/usr/bin/env bash
# Session 35, call 7, on main. Call 6 (JOB_TRACE=5): a J_CLASSIFY task's lane 0 spends
# 8-33 us in find_live (head, version, a four-way search, a scan: ~6-13 dependent loads of
# the graph), against 1-4 us for ~5 dependent loads of the batch's own arrays before it.
# Is a graph load that misses L2 that slow here, or is it the resident kernel? Call 3's
# probe only measured L2 hits; its walks now cover every line.
#   bench/debug/load_latency.py --beside-engine /tmp/shd
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/call7/c7.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
timeout -k 5 150 python3 -P bench/debug/load_latency.py --beside-engine /tmp/shd > $R/latency.md 2>&1
echo "load_latency rc $? at $(el) s" | tee -a $R/time.txt; cat $R/latency.md | tee -a $R/time.txt
