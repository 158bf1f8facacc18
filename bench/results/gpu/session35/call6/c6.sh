#!/usr/bin/env bash
# Session 35, call 6, on main. Call 5: with HELP_MASK=0 (every task on the updater warps,
# back to back, beside no executor's code) J_CLASSIFY's tasks still took 16-65 us; its
# icache_cost probe was wrong (ptxas folded the adds) and is mended (multiply-adds).
# 1. bench/debug/icache_cost.py, mended.
# 2. JOB_TRACE=5: lane 0 of each J_CLASSIFY task times the parts of its own path (histogram
#    rows: segstart = before its find_live, count = its find_live, verify = after it).
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/call6/c6.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
timeout -k 5 60 python3 -P bench/debug/icache_cost.py > $R/icache.md 2>&1
echo "icache_cost rc $? at $(el) s" | tee -a $R/time.txt; cat $R/icache.md | tee -a $R/time.txt
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=5" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace5-$1-$2.txt 2>&1
  echo "JOB_TRACE=5 $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^  tasks (classify|segstart|count|verify)" $R/trace5-$1-$2.txt | cut -c1-260 | tee -a $R/time.txt
done
