#!/usr/bin/env bash
# Written in session 36 for the next one (its device time was spent). On main; every switch
# below is compiled here (nvcc 13.0, sm_90), none but FIND_ONE_PATH has run on a device.
# Session 36 found that a job's lanes searching lists of their own run their searches one
# after another where the lists take code paths of their own (JOB_TRACE=8: 2-4 us on one
# lane, 8-16 us on every lane at once). Candidates, each a switch (default 0):
#   FIND_ONE_PATH=1  find_live in one path; J_CLASSIFY's half edges at one call site
#                    (call 5: 180.71 against 183.04 ms; 74 engine GPU tests passed, the rest
#                    of the suite did not run);
#   COPY_ONE_PATH=1  J_COPY's merged_pos at one call site; an insertion's two searches at once;
#   PUBLISH_ALONE=8  J_COPY: a segment of <= 8 half edges from its first insertion on is
#                    published by the lane that completed it, all such lanes at once (a task of
#                    insertions published up to 32 one after another: copy's tail of 85 us a
#                    batch on Q_7 insertion10, tasks of 32-131 us in session 35's trace).
# 1. Turns on the 22 oracle count rows: m (main), u (FIND), a (all three), c (FIND + COPY),
#    p (FIND + PUBLISH).
# 2. JOB_TRACE=2 on Q_7 insertion10 and Q_1 deletion10, m against a (copy and classify tasks).
# 3. JOB_TRACE=9 of main: a J_ITEMS task's parts.
# 4. The race hunt with all three and self-checks.
# Then c2-tests.sh with the defines that won, and flip them in gpu/layout.cuh if it passes.
# Carry: .dev28/common.sh .dev28/shd.tar.xz (the kernel cache does not fit beside main's tree)
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session36/next/c1-switches.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
defs() { case $1 in
  m) echo "";; u) echo "-DFIND_ONE_PATH=1";; a) echo "-DFIND_ONE_PATH=1 -DCOPY_ONE_PATH=1 -DPUBLISH_ALONE=8";;
  c) echo "-DFIND_ONE_PATH=1 -DCOPY_ONE_PATH=1";; p) echo "-DFIND_ONE_PATH=1 -DPUBLISH_ALONE=8";; esac; }
mkdir -p $R/turns
for turn in m1 u1 a1 c1 p1 m2 u2 a2 c2 p2 m3 u3 a3 c3 p3; do
  [ $(el) -gt 330 ] && break
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 60 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[muacp][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for v in m a; do for row in "Q_7 insertion10" "Q_1 deletion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=2 $(defs $v)" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace2$v-$1-$2.txt 2>&1
  echo "JOB_TRACE=2 ($v) $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|step_ns|^  tasks (classify|copy|items)" $R/trace2$v-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done; done
# JOB_TRACE=9 (compiled, never run): where a J_ITEMS task's 33-65 us go. Rows: segstart =
# update records and empty completions, verify = a task completed as lines, count = the slot
# claim, alloc = plans, slots and item bodies, publish = fence and stamps.
for row in "Q_7 insertion10" "Q_1 deletion10"; do
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=9" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace9-$1-$2.txt 2>&1
  echo "JOB_TRACE=9 $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^  tasks (items|segstart|verify|count|alloc|publish)" $R/trace9-$1-$2.txt | cut -c1-300 | tee -a $R/time.txt
done
left=$(( 560 - $(el) ))
[ $left -gt 40 ] && { timeout -k 5 $left python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget $(( left - 10 )) \
    --variant="$(defs a)" > $R/race.log 2>&1; echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/race.log | tee -a $R/time.txt; }
