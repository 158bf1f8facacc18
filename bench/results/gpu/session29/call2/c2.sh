#!/usr/bin/env bash
# Session 29 call 2 (branch fuse-s1 with FUSE_SEGSTART_PLACE and FUSE_COPY_PUBLISH on by
# default, FUSE_CLASSIFY_SEGINFO removed): the fused kernel's first race hunt (call 1's
# quit on an argparse error: a --variant value starting with "-" needs "--variant=..."),
# the engine tests most sensitive to races, and the oracle count rows in turns against
# the unfused kernel (u: both fusions 0). Carry: .dev28
source .dev28/common.sh
cp bench/results/gpu/session29/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
U="-DFUSE_SEGSTART_PLACE=0 -DFUSE_COPY_PUBLISH=0"
for turn in u1 g1 u2 g2 u3 g3; do
  defs=""; [ ${turn:0:1} = u ] && defs="$U"
  DCSM_KERNEL_DEFINES="$defs" PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/m timeout -k 5 200 python3 -P bench/debug/race_hunt.py --repeat 12 --check --budget 180 \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -8 $R/race.log | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "random_streams or several_updater or hub_vertex or pool_backpressure or self_checks or controls_dated or register_and" > $R/tests.log 2>&1
echo "engine tests: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
