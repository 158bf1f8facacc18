#!/usr/bin/env bash
# Written in session 37 for the next one (compiled with nvcc 13.0 for sm_90, never run). A
# soft batch cap, BATCH_SOFT (layout.cuh, form_batch): a batch closes at BATCH_SOFT records
# unless all that waits fits within BATCH_SOFT_ALL (default 1.25 x BATCH_SOFT), then it takes
# it all, up to BATCH_CAP. Why: session 37's call 2 profile of Q_1 deletion10 ran 4 batches
# of 4,096, 8,192, 16,384 (the cap, 16,612 waiting) and 228 updates, the last 0.13-0.16 ms of
# a 1.43 ms apply; a plain batch_cap of 32,768 helped the light rows but slowed the heavy
# ones (call 3). Variants, in turns on the 22 oracle count rows:
#   m  main (batch_cap 16384)
#   s  batch_cap 32768, -DBATCH_SOFT=16384 (all taken up to 20,480 waiting)
#   S  batch_cap 32768, -DBATCH_SOFT=16384 -DBATCH_SOFT_ALL=24576
#   k  batch_cap 32768
#   p  batch_cap 32768, pieces of 8192 after the first of 2048 (call 3's p, before the first
#      piece was 2048, had the eight light rows lowest of all, 12.46-12.74 ms against main's
#      13.29-13.80, and its heavy rows within main's spread; added in session 38)
#   P  p and -DBATCH_SOFT=16384
# then apply_profile of s on Q_1 deletion10 (its batches), and the race hunt with s.
# If s or S wins: the engine and oracle GPU tests with it (session36/next/c2-tests.sh needs
# the batch cap too: DCSM_KERNEL_DEFINES cannot change BATCH_CAP; make batch_cap 32768 and
# BATCH_SOFT 16384 the defaults on a branch and run the suite there first).
# Carry: .dev28/shd.tar.xz (bench/device/README.md). Alone, or after c1-modes.sh in one call
# (both.sh).
[ -n "${R:-}" ] || { NO_CACHE_BACK=1; source bench/device/common.sh; }
cp bench/results/gpu/session37/next/c2-soft-cap.sh $R/  # (the data, the package, device.txt: common.sh)
defs() { case $1 in m|k|p) echo "";; s|P) echo "-DBATCH_SOFT=16384";; S) echo "-DBATCH_SOFT=16384 -DBATCH_SOFT_ALL=24576";; esac; }
cap() { case $1 in m) echo 16384;; *) echo 32768;; esac; }
piece() { case $1 in p|P) echo 8192;; *) echo 0;; esac; }
mkdir -p $R/turns-soft
for turn in m1 s1 S1 k1 p1 P1 m2 s2 S2 k2 p2 P2 m3 s3 S3 k3 p3 P3 m4 s4 S4 k4 p4 P4; do
  [ $(el) -gt ${SOFT_UNTIL:-250} ] && break
  v=${turn:0:1}
  DCSM_KERNEL_DEFINES="$(defs $v)" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns-soft/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 --batch-cap $(cap $v) --piece $(piece $v) > $R/turns-soft/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns-soft $(ls -d $R/turns-soft/[msSkpP][0-9] | xargs -n1 basename) > $R/turns-soft.md 2>&1
cat $R/turns-soft.md | tee -a $R/time.txt
DCSM_KERNEL_DEFINES="$(defs s)" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query Q_1 \
    --stream deletion10 --batch-cap 32768 > $R/profs-Q_1-deletion10.txt 2>&1
echo "apply_profile (s) rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^apply|timed call" $R/profs-Q_1-deletion10.txt | tee -a $R/time.txt
left=$(( 560 - $(el) ))
[ $left -gt 40 ] && { timeout -k 5 $left python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget $(( left - 10 )) \
    --batch-cap 32768 --updates 30000 --variant="$(defs s)" > $R/race.log 2>&1; echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/race.log | tee -a $R/time.txt; }
