#!/usr/bin/env bash
# Session 10, call 2: the device clock against the host's (tick, offset, drift); the latency
# part with every update's stamps saved, as is and with faster idle polling (-D variants).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/main
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
cp .devrun/c2.sh $R/; git diff > $R/worktree.diff 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 30 python3 -P bench/debug/device_clock.py --seconds 2 --out $R/clock.json > $R/clock.log 2>&1
echo "clock rc $? at $(el) s" | tee -a $R/time.txt; head -12 $R/clock.log
v=0
for D in "" "-DIDLE_POLL_NS=250" "-DIDLE_POLL_NS=250 -DWAIT_NS_NEAR=128" ""; do
  [ $(el) -gt 400 ] && break
  v=$((v+1)); echo "$D" > $R/variant-$v.txt
  DCSM_KERNEL_DEFINES="$D" PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/latency-$v --data .shdata \
      --skip-search --timelines $R/latency-$v/timelines > $R/latency-$v.log 2>&1
  echo "latency $v ($D) rc $? at $(el) s" | tee -a $R/time.txt
done
