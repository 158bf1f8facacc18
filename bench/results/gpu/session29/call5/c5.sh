#!/usr/bin/env bash
# Session 29 call 5 (branch done-lines, DONE_LINES 1 by default), in the session's last
# ~290 s of device time: the oracle count rows in turns against DONE_LINES=0 (o), then the
# pool race hunt and the engine tests most sensitive to races, each bounded so that the call
# ends before the budget. Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz .dev28/summ.py
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session29/call5/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
for turn in o1 l1 o2 l2 o3 l3; do
  [ $(el) -gt 100 ] && break
  defs=""; [ ${turn:0:1} = o ] && defs="-DDONE_LINES=0"
  DCSM_KERNEL_DEFINES="$defs" PYTHONPATH=/tmp/m timeout -k 5 50 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/m timeout -k 5 75 python3 -P bench/debug/race_hunt.py --repeat 8 --check --budget 60 --variant= \
    > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/race.log | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 240 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "random_streams or controls_dated or self_checks" > $R/tests.log 2>&1
echo "engine tests: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
