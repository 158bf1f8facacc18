#!/usr/bin/env bash
# Written in the twenty-first session for a later one (not run): issue 17's slow first 43M
# insertion. Each scale_up_bench.py row now says what its timed applies compiled
# (`compiled`: numba's compiles, not its cache loads, with their seconds, and the kernels
# CuPy added to its cache; bench/compile_watch.py). A fresh install (numba's cache lives in
# the install's __pycache__) with an empty CuPy cache, then the 43M triangle three times and
# the 4-cycle once, each its own process, as session 19's call 1 ran them (5.81 and 6.59M/s
# first, 7.1-7.6M/s after). If the first row's `compiled` names functions, the engine's
# warm-up (dcsm/engine/factory.py warm_up, GpuEngine._warm_up) misses them.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh .devrun/ (no kernel cache: the
#   point is a cold one). Carry: .devrun
source .devrun/common-nowhl.sh
export CUPY_CACHE_DIR=/tmp/cupy-cold; rm -rf $CUPY_CACHE_DIR; mkdir -p $CUPY_CACHE_DIR; NO_CACHE_BACK=1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.py gpu/*.cuh gpu/*.cu > $R/files.md5
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
PYTHONPATH=/tmp/m timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
for run in "triangle 1" "triangle 2" "4cycle 1" "triangle 3"; do
  set -- $run; [ $(el) -gt 500 ] && continue
  PYTHONPATH=/tmp/m timeout -k 5 90 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2.json'))['rows'][0]; print('   ', r['updates_per_s'], 'compiled', r['compiled'])" 2>&1 | tee -a $R/time.txt
done
