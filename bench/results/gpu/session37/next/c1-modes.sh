#!/usr/bin/env bash
# Written in session 37 for the next one (its device time was spent). The light rows run in
# two modes, ~0.4-0.5 ms apart on a row and stable over its five repeats (session 37, call
# 1; sessions 30-33's turns show it too; heavy rows do not move, so the host's pace is the
# suspect): not page faults, not glibc's trimming (call 2). Here:
# 0. (Added in session 38, first.) bench/debug/engine_modes.py, built with -DRECORD_SM=1:
#    8 engines in one process, each timed over 7 applies, stopped, relaunched on the same
#    memory and timed again, on Q_1 deletion10 and Q_7 insertion10. Session 38 found in the
#    turns of session 37 that the light rows of one engine (one stream of one run) move
#    together: if the mode follows the engine, its memory sets it; if it changes at a
#    relaunch, the launch (block 0's SM is printed). The two engines of one process mostly
#    agreed, adjacent processes did not (turn_modes.py): so also with each engine's host
#    thread pinned to a core of its own (--cpus), and with each engine closed before the
#    next (--close-each: memory reused, as in gpu_bench) against kept (new memory each).
# 1. apply_profile --rounds 40 on Q_1 deletion10 (Q_7 insertion10 dropped in session 38): a line an apply (its
#    batches, when the device took the first, the host's steps, the core the host thread
#    ran on), with numba's 4 host threads (main), with none (DCSM_HOST_THREADS=0), and with
#    OpenMP's workers sleeping at once (OMP_WAIT_POLICY=PASSIVE: no worker spins on a
#    sibling of the host thread's core).
# 2. Turns of the 22 oracle count rows: m (main), z (DCSM_HOST_THREADS=0), w (PASSIVE), b
#    (added in session 38: OMP_PROC_BIND=spread OMP_PLACES=cores, OpenMP's threads, the
#    host thread among them, bound to cores of their own); turn_modes.py on them (the rows
#    now record their host cores).
# Carry: .dev28/shd.tar.xz (bench/device/README.md). Alone, or with c2-soft-cap.sh in one call
# (both.sh).
[ -n "${R:-}" ] || { NO_CACHE_BACK=1; source bench/device/common.sh; }
cp bench/results/gpu/session37/next/c1-modes.sh $R/  # (the data, the package, device.txt: common.sh)
(lscpu; cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list) > $R/host.txt 2>&1
for row in "Q_1 deletion10 - keep" "Q_1 deletion10 0,2,4,6,8,10,12,14 keep" "Q_1 deletion10 - close" "Q_7 insertion10 - keep"; do
  set -- $row; pin=$3; [ $pin = - ] && pin=""; close=""; [ $4 = close ] && close=--close-each
  f=$R/engines-$1-$2${pin:+-pinned}${close:+-closed}.txt
  DCSM_KERNEL_DEFINES=-DRECORD_SM=1 timeout -k 5 100 python3 -P bench/debug/engine_modes.py --data /tmp/shd --query $1 \
      --stream $2 --engines 8 --launches 2 --rounds 7 --cpus "$pin" $close > $f 2>&1
  echo "engine_modes $1 $2 ${pin:+cpus $pin }$close rc $? at $(el) s" | tee -a $R/time.txt; cat $f | tee -a $R/time.txt
done
env_of() { case $1 in m) echo "";; z) echo "DCSM_HOST_THREADS=0";; w) echo "OMP_WAIT_POLICY=PASSIVE";;
  b) echo "OMP_PROC_BIND=spread OMP_PLACES=cores";; esac; }
for v in m z w; do for row in "Q_1 deletion10"; do
  set -- $row
  env $(env_of $v) timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 \
      --batch-cap 16384 --rounds 40 > $R/rounds$v-$1-$2.txt 2>&1
  echo "rounds ($v) $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  sed -n '/^round/,$p' $R/rounds$v-$1-$2.txt | awk 'NR>1 {print $2, $3}' | sort -n | awk '{a[NR]=$1; b[$2]++} END {printf "  apply ms min %s median %s max %s; batches:", a[1], a[int((NR+1)/2)], a[NR]; for (k in b) printf " %s x%d", k, b[k]; print ""}' | tee -a $R/time.txt
done; done
mkdir -p $R/turns-modes
for turn in m1 z1 w1 b1 m2 z2 w2 b2 m3 z3 w3 b3 m4 z4 w4 b4; do
  [ $(el) -gt ${MODES_UNTIL:-400} ] && break
  env $(env_of ${turn:0:1}) timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns-modes/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/turns-modes/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns-modes $(ls -d $R/turns-modes/[mzwb][0-9] | xargs -n1 basename) > $R/turns-modes.md 2>&1
python3 bench/debug/turn_modes.py $R/turns-modes >> $R/turns-modes.md 2>&1
cat $R/turns-modes.md | tee -a $R/time.txt
