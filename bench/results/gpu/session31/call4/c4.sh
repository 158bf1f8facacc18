#!/usr/bin/env bash
# Session 31, call 4: branch copy-unroll (COPY_UNROLL, the old chunks a J_COPY task copies, a
# knob): an insertion batch's J_COPY is ~115 us, the largest job (call 2), and with only the
# updater warps (HELP_MASK=0u) ~26 ms, ~13,000 tasks of ~8 us: fewer, larger tasks? The
# timed call's updater steps at 4 (main), 8 and 16 (apply_profile, Q_7 and Q_0 insertion10),
# the 22 oracle count rows in turns (p: 4, q: 8, r: 16), the race hunt at 16 with self-checks.
# Run from a checkout of copy-unroll.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/cupy-cache.tgz.ab .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session31/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
for u in 4 8 16; do
  for row in "Q_7 insertion10" "Q_0 insertion10"; do
    set -- $row
    DCSM_KERNEL_DEFINES="-DCOPY_UNROLL=$u" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 > $R/prof-u$u-$1-$2.txt 2>&1
    echo "profile u$u $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-u$u-$1-$2.txt | cut -c1-60)" | tee -a $R/time.txt
  done
done
mkdir -p $R/turns
for turn in p1 q1 r1 r2 q2 p2 p3 q3 r3; do  # p: COPY_UNROLL 4, q: 8, r: 16
  [ $(el) -gt 260 ] && break
  case ${turn:0:1} in p) u=4;; q) u=8;; r) u=16;; esac
  DCSM_KERNEL_DEFINES="-DCOPY_UNROLL=$u" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[pqr][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
timeout -k 5 $(( 430 - $(el) )) python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget $(( 400 - $(el) )) \
    --variant=-DCOPY_UNROLL=16 --variant="-DCOPY_UNROLL=16 -DHELP_MASK=0u" > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt
