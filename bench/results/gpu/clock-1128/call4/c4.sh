#!/usr/bin/env bash
# Session 10, call 4: device clock pings (gpu/device_clock.py): the engine tests that touch
# the path, then the latency part with stamps saved, as is and with idle polling at 250 ns.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/main
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
cp .devrun/c4.sh $R/; git diff > $R/worktree.diff 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 100 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu \
  -k "device_times or stop_and_relaunch" > $R/tests.log 2>&1
echo "tests rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/tests.log
v=0
for D in "" "-DIDLE_POLL_NS=250"; do
  [ $(el) -gt 420 ] && break
  v=$((v+1)); echo "$D" > $R/variant-$v.txt
  DCSM_KERNEL_DEFINES="$D" PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/latency-$v --data .shdata \
      --skip-search --timelines $R/latency-$v/timelines > $R/latency-$v.log 2>&1
  echo "latency $v ($D) rc $? at $(el) s" | tee -a $R/time.txt
done
