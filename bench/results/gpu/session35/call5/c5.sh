#!/usr/bin/env bash
# Session 35, call 5, on main: call 4 found a J_CLASSIFY task as slow when run again at once
# (16-33 us, code and data warm) as the first time, for a chain of ~15 dependent loads of
# ~145 ns each. Two more measurements:
# 1. bench/debug/icache_cost.py: what fetching a straight run of instructions costs a warp,
#    first and second run, by the run's size (the kernel's text is ~650 KB).
# 2. JOB_TRACE=2 of Q_1 deletion10 with HELP_MASK=0: the updater warps run every task
#    themselves, one after another on the same four warps, beside no executor's code.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/call5/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
timeout -k 5 150 python3 -P bench/debug/icache_cost.py > $R/icache.md 2>&1
echo "icache_cost rc $? at $(el) s" | tee -a $R/time.txt; cat $R/icache.md | tee -a $R/time.txt
DCSM_KERNEL_DEFINES="-DJOB_TRACE=2 -DHELP_MASK=0u" timeout -k 5 150 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
    --query Q_1 --stream deletion10 --batch-cap 16384 > $R/trace-nohelp.txt 2>&1
echo "trace HELP_MASK=0 rc $? at $(el) s" | tee -a $R/time.txt
grep -E "^apply|step_ns|^  tasks " $R/trace-nohelp.txt | cut -c1-260 | tee -a $R/time.txt
