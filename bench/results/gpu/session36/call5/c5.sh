#!/usr/bin/env bash
# Session 36, call 5, on main: the last ~440 s of device time. Call 4 (JOB_TRACE=8): a
# classify task's find_live took 2-4 us on one lane alone and 2-4 us with every lane on one
# list, but 8-16 us with every lane on its own list: the lanes' searches run one after
# another. FIND_ONE_PATH=1 gives find_live one code path (lists with a tail or without,
# no version) and J_CLASSIFY's two kinds of half edge one call site.
# 1. JOB_TRACE=8 with FIND_ONE_PATH=1: the count row (own lists at once) against call 4's.
# 2. Turns on the 22 oracle count rows: m (main) against u (FIND_ONE_PATH=1).
# 3. The race hunt with FIND_ONE_PATH=1 and self-checks.
# No kernel cache carried (the carry limit); every build is cold.
# Carry: .dev28/common.sh .dev28/shd.tar.xz
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/call5/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=8 -DFIND_ONE_PATH=1" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace8u-$1-$2.txt 2>&1
  echo "JOB_TRACE=8 FIND_ONE_PATH=1 $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|step_ns|^  tasks (classify|segstart|count|alloc)" $R/trace8u-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
defs() { case $1 in m) echo "";; u) echo "-DFIND_ONE_PATH=1";; esac; }
mkdir -p $R/turns
for turn in m1 u1 m2 u2 m3 u3 m4 u4; do
  [ $(el) -gt 200 ] && break
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 60 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mu][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
left=$(( 290 - $(el) ))
[ $left -gt 30 ] && { timeout -k 5 $left python3 -P bench/debug/race_hunt.py --repeat 4 --check --budget $(( left - 8 )) \
    --variant="-DFIND_ONE_PATH=1" > $R/race.log 2>&1; echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/race.log | tee -a $R/time.txt; }
