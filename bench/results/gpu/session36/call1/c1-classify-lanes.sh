#!/usr/bin/env bash
# Written in session 35 for the next one (no device time was left to start a machine). On
# main; both trace modes are compiled out of the default build, never run on a device.
# Call 6 put a J_CLASSIFY task's 16-33 us in find_live: 8-33 us for ~6-13 dependent graph
# loads, which cost 145 ns from L2 and ~340 ns from DRAM alone (call 7). Two questions:
# 1. JOB_TRACE=7: what a dependent load costs inside the running kernel. At the start of
#    each classify task, lane 0 chases 32 random words of head (histogram row segstart),
#    then of the entries pool (count); then all 32 lanes chase their own at once (verify).
#    A row counts a chase's whole time: ~4.6 us is 145 ns a load, ~11 us 340 ns.
# 2. JOB_TRACE=6: count = the smaller endpoint's searches; alloc = the same searches again
#    at once (data warm); publish = lane 0's search on every lane of that path (one list:
#    the lanes cannot diverge).
# If loads are slow in situ (1), the kernel's own traffic is the cause; if they are not and
# one list is fast (2), the lanes' searches serialise: make find_live branch-free (one path
# with or without a tail) or warp-cooperative.
# Carry: .dev28/common.sh .dev28/shd.tar.xz (.dev28/cupy-cache.tgz.aa if one was kept)
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/next/c1-classify-lanes.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for jt in 7 6; do
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $row
    DCSM_KERNEL_DEFINES="-DJOB_TRACE=$jt" timeout -k 5 120 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 > $R/trace$jt-$1-$2.txt 2>&1
    echo "JOB_TRACE=$jt $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
    grep -E "^  tasks (classify|segstart|count|alloc|publish|verify)" $R/trace$jt-$1-$2.txt | cut -c1-260 | tee -a $R/time.txt
  done
done
