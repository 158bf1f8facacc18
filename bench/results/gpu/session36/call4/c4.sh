#!/usr/bin/env bash
# Session 36, call 4, on main (the session's last device time). Call 3: CTX_SHARED=1 was
# slower (192.02 against 185.52 ms in turns) and the classify body as slow (16-32 us), so
# the context's reloads are not the cause. Call 2: in situ a dependent load costs 250-500 ns.
# 1. JOB_TRACE=8: a classify task's searches (find_live) three ways: the first active lane's
#    alone (segstart row), every lane its own at once (count), every lane one list (alloc).
#    If one lane alone is ~2-3 us and its own at once is 16-32, the lanes' searches run one
#    after another (divergence): the next change is a warp-cooperative search.
# 2. Main's default build beside RapidFlow on this host (22 oracle count rows).
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=8" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace8-$1-$2.txt 2>&1
  echo "JOB_TRACE=8 $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|^  tasks (classify|segstart|count|alloc)" $R/trace8-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
    --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>&1 | tee -a $R/time.txt
