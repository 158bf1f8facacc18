#!/usr/bin/env bash
# Written in session 35 for the next one (no device time was left to start a machine). On main. Call 7: a dependent load alone costs 145 ns from L2 and
# ~340 ns from DRAM on this H200, so find_live's ~6-13 loads should take 1-4 us, not call
# 6's 8-33 us. JOB_TRACE=6 (rows of the task histogram): count = the smaller endpoint's
# searches; alloc = the same searches again at once (data warm); publish = lane 0's search
# on every lane of that path (one list: no divergence between lanes).
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/next/c1-classify-lanes.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
DCSM_KERNEL_DEFINES="-DJOB_TRACE=6" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
    --query Q_1 --stream deletion10 --batch-cap 16384 > $R/trace6.txt 2>&1
echo "JOB_TRACE=6 rc $? at $(el) s" | tee -a $R/time.txt
grep -E "^  tasks (classify|segstart|count|alloc|publish|verify)" $R/trace6.txt | cut -c1-260 | tee -a $R/time.txt
