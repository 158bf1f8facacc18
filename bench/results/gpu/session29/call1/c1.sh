#!/usr/bin/env bash
# Written in session 28 for the next one (not run): branch fuse-s1's three job fusions
# (session27/updater-phases-plan.md steps B1, B7, B4; layout.cuh FUSE_SEGSTART_PLACE,
# FUSE_CLASSIFY_SEGINFO, FUSE_COPY_PUBLISH, each 0 by default, so the branch's default kernel
# is main's) on the device for the first time. Run from a checkout of fuse-s1.
#  1. the pool case repeated under each fusion alone and all three, self-checks on and off
#     (bench/debug/race_hunt.py: outcomes, counts and the final graph against the CPU
#     engine; CHK_SEG_COUNTER flags an arrival count past its target);
#  2. the engine tests with all three on (DCSM_KERNEL_DEFINES reaches every engine a test
#     builds, except where a test sets its own defines);
#  3. the oracle count rows without and with them, in turns (bench/gpu_bench.py), then
#     python3 bench/debug/compare_turns.py $R m1 f1 m2 f2 m3 f3: a fusion that helps shows in
#     the light rows and in the step columns (segstart, seginfo, publish read 0 when fused).
# Prepare: a carry folder with bench/results/gpu/session17/common-nowhl.sh as common.sh (its
#   cache path pointed at that folder), the last call's kernel cache, and the shared data's
#   oracle-github packed as shd.tar.xz (session 28's .dev28). Carry: that folder.
D=${D:-.dev28}
source $D/common.sh
cp bench/results/gpu/session28/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf $D/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
F="-DFUSE_SEGSTART_PLACE=1 -DFUSE_CLASSIFY_SEGINFO=1 -DFUSE_COPY_PUBLISH=1"
PYTHONPATH=/tmp/m timeout -k 5 230 python3 -P bench/debug/race_hunt.py --repeat 10 --check --budget 210 \
    --variant "$F" --variant "-DFUSE_SEGSTART_PLACE=1" --variant "-DFUSE_CLASSIFY_SEGINFO=1" \
    --variant "-DFUSE_COPY_PUBLISH=1" > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -12 $R/race.log | tee -a $R/time.txt
DCSM_KERNEL_DEFINES="$F" DCSM_SUITE_SECONDS=220 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "random_streams or several_updater or hub_vertex or pool_backpressure or self_checks or controls_dated or register_and" > $R/tests.log 2>&1
echo "engine tests, fusions on: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
for turn in m1 f1 m2 f2 m3 f3; do
  [ $(el) -gt 540 ] && break
  defs=""; [ ${turn:0:1} = f ] && defs="$F"
  DCSM_KERNEL_DEFINES="$defs" PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
