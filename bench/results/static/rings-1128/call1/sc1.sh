#!/usr/bin/env bash
# 2026-11-28 eighth session, call 1: the ring counter (gpu/ring_count.cuh: ring_pairs,
# wedge_roots) on the device. 1) the GPU suite but the engine tests; 2) static_bench on
# enron with --search (ring counter against the device search and the CPU engine);
# 3) Chung-Lu 1M one-label rings with --search; 4) Chung-Lu 20M rings against the CPU
# engine on the host's cores. Carry: .devrun .whl-gpu .shdata.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc1.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
ROOT=$PWD
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 150 python3 -P -m pytest tests/gpu/test_gpu_static.py -k "ring or random_graph" -q -p no:cacheprovider --confcutdir=tests/gpu --timeout 120 > $R/rings.log 2>&1
rc=$?; echo "ring tests rc $rc at $(el) s" | tee -a $R/time.txt; tail -25 $R/rings.log
[ $rc = 0 ] && DCSM_SHARED_DATA=$ROOT/.shdata DCSM_RESULTS=$R/rest-tests timeout -k 5 260 bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
echo "rest tests rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/rest-tests/gpu-tests.log
timeout -k 5 90 python3 -P bench/static_bench.py --data .shdata --sets enron --search --out $R/enron.json > $R/enron.log 2>&1
echo "enron rc $? at $(el) s" | tee -a $R/time.txt; tail -14 $R/enron.md
timeout -k 5 100 python3 -P bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-shapes triangle,cycle4,tailed4,diamond --search --out $R/cl1m.json > $R/cl1m.log 2>&1
echo "cl1m rc $? at $(el) s" | tee -a $R/time.txt; tail -6 $R/cl1m.md
timeout -k 5 $(( 585 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,cycle4,tailed4,diamond --cpu-max-edges 30000000 --out $R/cl20m.json > $R/cl20m.log 2>&1
echo "cl20m rc $? at $(el) s" | tee -a $R/time.txt; tail -6 $R/cl20m.md
