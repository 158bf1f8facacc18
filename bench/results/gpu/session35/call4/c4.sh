#!/usr/bin/env bash
# Session 35, call 4, on main: are an updater task's 16-33 us its data or its code? Call 3
# ruled out the TLBs (one lane's dependent __ldcg: 145-150 ns over 8 MB or 4 GB of span) and
# the other warps (classify's tasks as slow with a third of the blocks, or polling 8x less).
# The kernel's text is 652 KB (run_task alone 212 KB), far past an SM's instruction caches.
# JOB_TRACE=3 runs each J_CLASSIFY task a second time at once (code and data warm);
# JOB_TRACE=4 runs a neighbouring task instead (code warm, its lists cold). The second run's
# time is the histogram's "verify" row.
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for jt in 3 4; do
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $row
    DCSM_KERNEL_DEFINES="-DJOB_TRACE=$jt" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 > $R/trace$jt-$1-$2.txt 2>&1
    echo "JOB_TRACE=$jt $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
    grep -E "^  tasks (classify|verify)" $R/trace$jt-$1-$2.txt | cut -c1-260 | tee -a $R/time.txt
  done
done
