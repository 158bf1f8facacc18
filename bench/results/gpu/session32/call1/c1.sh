#!/usr/bin/env bash
# Written in session 31 for the next one (not run). Branch job-trace (on read-job, on
# mask-unroll) holds four changes, each behind a switch:
#   MASK_UNROLL 4: J_MASK's chunks per task apart from J_COPY's (COPY_UNROLL 1 on main). At
#     1 (main) J_MASK took 40 against 24 us a batch of Q_7 insertion10 (session31/call5),
#     and the light insertion rows lost ~3 %.
#   READ_JOB 1: a long run of input records is read as a job every warp helps with (J_READ)
#     instead of by the four updater warps (step input_run: 30-40 us a batch, call 2).
#   PRE_ENT 1: J_CLASSIFY per half edge, the larger endpoint's half edge looking its entry
#     up beside the classifying one, so that J_SEGEDIT's in-place deletions skip their
#     binary search (J_SEGEDIT ~30 us a batch of deletions; a job costs its longest chain).
#   JOB_TRACE 0 (1 for the profiles below): each job's time split at its first and last
#     task's claims (the helpers noticing it, the hand-out, its last tasks), per job kind.
# In turns: m (main's behaviour: -DMASK_UNROLL=1 -DREAD_JOB=0 -DPRE_ENT=0), k (MASK_UNROLL
# alone), r (k + READ_JOB), p (r + PRE_ENT, the branch's default), the 22 oracle count rows;
# the timed call's steps for Q_7 insertion10 and Q_1 deletion10; the race hunt with
# self-checks on p and on m's switches; the engine and oracle GPU tests on p (they may need
# a second call). Merge what wins (a switch that loses goes back to main's
# behaviour as its default), then run bench/gpu_bench.py beside RapidFlow on main
# (session30/call4's command) for the README's table. Run from a checkout of job-trace.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/cupy-cache.tgz.ab .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session31/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
defs_of() { case $1 in m) echo "-DMASK_UNROLL=1 -DREAD_JOB=0 -DPRE_ENT=0";; k) echo "-DREAD_JOB=0 -DPRE_ENT=0";;
             r) echo "-DPRE_ENT=0";; p) echo "";; esac; }
mkdir -p $R/turns
for turn in m1 k1 r1 p1 p2 r2 k2 m2 m3 k3 r3 p3; do
  [ $(el) -gt 220 ] && break
  DCSM_KERNEL_DEFINES="$(defs_of ${turn:0:1})" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mkrp][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for v in m p; do
  for row in "Q_7 insertion10" "Q_1 deletion10"; do
    set -- $row
    DCSM_KERNEL_DEFINES="$(defs_of $v)" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-60)" | tee -a $R/time.txt
  done
done
for row in "Q_7 insertion10" "Q_1 deletion10" "Q_9 insertion10"; do  # where a job's time goes
  set -- $row
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=1" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query $1 --stream $2 --batch-cap 16384 > $R/trace-$1-$2.txt 2>&1
  echo "trace $1 $2 rc $? at $(el) s" | tee -a $R/time.txt; grep -A1 "trace us/batch" $R/trace-$1-$2.txt | cut -c1-400 | tee -a $R/time.txt
done
timeout -k 5 110 python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget 95 \
    --variant= --variant=-DHELP_MASK=0u "--variant=-DMASK_UNROLL=1 -DREAD_JOB=0 -DPRE_ENT=0" > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -6 $R/race.log | tee -a $R/time.txt
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 565 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
