#!/usr/bin/env bash
# For the next session (written 2026-11-28 10:20 UTC): branch levels-shared (.base-lvl, an
# archive without bench/results): the executor's search levels in shared memory. Carry:
# .devrun .whl-gpu .shdata .base-lvl .base-044. ~560 s. 1) its engine tests with
# self-checks; 2) A/B, alternating: LEVELS_SHARED=1 (the branch), =0 (main's layout from
# the same source) and 044025d (.base-044: the engine of 2026-11-27's benchmark, before
# the 20-50 % slower updater steps): oracle count rows, the updater steps and response
# times; 3) the 10M 4-cycle row at LEVELS_SHARED 1 and 0.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/lvl /tmp/old
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/lvl .base-lvl >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/old .base-044 >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/lvl:/tmp/site
cp .devrun/next2.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
(cd .base-lvl && DCSM_SHARED_DATA=../.shdata timeout -k 5 240 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu \
    -k "random_streams or last_levels or short_path_copies or slow_jobs or hub_vertex" > $R/lvl-tests.log 2>&1)
echo "tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/lvl-tests.log
for i in 1 2; do for v in 1 0 old; do
  [ $(el) -gt 400 ] && break
  X=""; [ $i = 2 ] && X="--skip-latency"  # round 2: the count rows again only
  if [ $v = old ]; then
    PYTHONPATH=/tmp/old:/tmp/site timeout -k 5 80 python3 -P .base-044/bench/gpu_bench.py --out $R/ab-$v-$i --data .shdata --oracle-count-only $X > $R/ab-$v-$i.log 2>&1
  else
    DCSM_KERNEL_DEFINES="-DLEVELS_SHARED=$v" timeout -k 5 80 python3 -P .base-lvl/bench/gpu_bench.py --out $R/ab-$v-$i --data .shdata --oracle-count-only $X > $R/ab-$v-$i.log 2>&1
  fi
  echo "ab $v round $i rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/ab-$v-$i/gpu_bench.md | tail -1
done; done
[ $(el) -lt 440 ] && PYTHONPATH=/tmp/lvl:/tmp/site timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g10.npz', chunglu_graph(10000000, 1111111, gamma=2.3, seed=0))"
for v in 1 0; do
  [ $(el) -gt 520 ] && break
  DCSM_KERNEL_DEFINES="-DLEVELS_SHARED=$v" timeout -k 5 60 python3 -P .base-lvl/bench/scale_up_bench.py --backend gpu --graph /tmp/g10.npz --patterns 4cycle --out $R/c4-10m-$v.json > $R/c4-10m-$v.log 2>&1
  echo "4cycle LEVELS_SHARED=$v rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/c4-10m-$v.log
done
