#!/usr/bin/env bash
# Session 39, call 4: main (DELETE_PATH on; call 3 ran the whole GPU suite: 314 passed) beside
# RapidFlow on the 22 oracle count rows, with every GPU row now timed before any RapidFlow run
# (call 3's first three deletion rows, timed right after RapidFlow's insertion runs, took
# 1.5-2x what call 1's turns measured). Then turns of the 22 rows without RapidFlow: main (m)
# against session 37's p (--piece 8192 --batch-cap 32768), in the time left.
# Carry: .dev28/shd.tar.xz .peers/bin/RapidFlow.out (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session39/call4/c4.sh $R/
prewarm "16384|" "32768|"
timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
    --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
grep -E "^\| (oracle|all)" $R/oracle-rf/gpu_bench.md | cut -d"|" -f3-5,8-10 | head -40 | tee -a $R/time.txt
flags() { case $1 in m) echo "";; p) echo "--piece 8192 --batch-cap 32768";; esac; }
mkdir -p $R/turns
for turn in m1 p1 m2 p2 m3 p3 m4 p4; do
  [ $(el) -gt 240 ] && break
  # shellcheck disable=SC2046
  timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 $(flags ${turn:0:1}) > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mp][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -4 $R/turns.md | tee -a $R/time.txt
