#!/usr/bin/env bash
# Session 41, call 4: does a light row's mode follow the kernel's launch? Call 3 pinned the
# whole process to one core at a time, with no worker threads, and one core gave both modes
# in two passes (core 0: Q_1 deletion10 1.56 then 1.25 ms; core 15: 1.20 then 2.03), so the
# host core does not set it. Here bench/debug/engine_modes.py (session 38, first run now),
# built with RECORD_SM=1: engines in one process, each timed over several launches, a line
# per (engine, launch) with block 0's SM (the updater warps), the host core, the rings'
# NUMA nodes and the device state's address bits; then a store+fence and a load through
# each engine's pinned done ring.
# Carry: .dev28/shd.tar.xz
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session41/call4/c4.sh $R/
prewarm "16384|-DRECORD_SM=1"
export DCSM_KERNEL_DEFINES=-DRECORD_SM=1
for spec in "keep 5 3" "close 4 3"; do
  set -- $spec
  [ $(el) -gt 170 ] && break
  f=$R/engines-Q_1-deletion10-$1.txt
  timeout -k 5 $(( 230 - $(el) )) python3 -P bench/debug/engine_modes.py --data /tmp/shd --query Q_1 \
      --stream deletion10 --engines $2 --launches $3 --rounds 5 $([ $1 = close ] && echo --close-each) > $f 2>&1
  echo "engine_modes Q_1 deletion10 $1 rc $? at $(el) s" | tee -a $R/time.txt
  cat $f | tee -a $R/time.txt
done
