#!/usr/bin/env bash
# Session 40, call 5 (main, the parallel completion read reverted): what an apply's last
# pumps spend their time on. apply_profile now times a pump's parts (drain_done, the match
# record read, count rows, add_seen, the clock's ping, the ring's flush, _check_error,
# _free_finished_slots) and prints the five slowest pumps part by part. Call 3's Q_1
# deletion10: two pumps 0.61 ms, 0.43 ms after the device's last finish; call 4 with
# drain_done on 4 threads: still 0.65 ms. Two runs of each row, and Q_1 deletion10 with
# call 4's x (--batch-cap 32768 --piece 32768: slower on every deletion row).
# Carry: .dev28/shd.tar.xz
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session40/call5/c5.sh $R/
prewarm "16384|" "32768|"
for spec in "Q_1 deletion10 16384 a" "Q_7 insertion10 16384 a" "Q_1 deletion10 16384 b" "Q_7 insertion10 16384 b" \
            "Q_1 deletion10 32768 x"; do
  set -- $spec
  [ $(el) -gt 200 ] && break
  f=$R/prof-$1-$2-$4.txt
  extra=$([ $4 = x ] && echo "--piece 32768")
  # shellcheck disable=SC2086
  timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap $3 $extra > $f 2>&1
  echo "apply_profile $spec rc $? at $(el) s: $(grep -E '^apply|^timed call' $f | tr '\n' ' ')" | tee -a $R/time.txt
  grep -A6 "^slowest pumps" $f | tee -a $R/time.txt
done
