#!/usr/bin/env bash
# Session 10 (2026-11-28), call 1: branch first-publish (.base-pub) against the working
# tree (main + the launch's tight clock calibration): oracle count rows taking turns, three
# rounds, RapidFlow beside round 1; then the latency part on each (old and new calibration).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/main /tmp/pub
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/pub .base-pub >/dev/null 2>&1 || exit 1
cp .devrun/c1.sh $R/; git log -1 --format=%H > $R/head.txt 2>/dev/null; git diff > $R/worktree.diff 2>/dev/null
nvidia-smi -L > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
for i in 1 2 3; do for b in pub main; do
  [ $(el) -gt 330 ] && break
  RF=""; [ $i = 1 ] && RF="--rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15"
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 90 python3 -P bench/gpu_bench.py --out $R/oracle-$b-$i --data .shdata \
      --oracle-count-only --skip-latency $RF > $R/oracle-$b-$i.log 2>&1
  echo "oracle $b round $i rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-$b-$i/gpu_bench.md | tail -1
done; done
for b in main pub; do
  [ $(el) -gt 480 ] && break
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/latency-$b --data .shdata \
      --skip-search > $R/latency-$b.log 2>&1
  echo "latency $b rc $? at $(el) s" | tee -a $R/time.txt
done
