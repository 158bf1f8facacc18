#!/usr/bin/env bash
# Session of 2026-11-28 09:21 (fifth), call 3: GPU suite part 2 (tests/gpu without
# test_engine_gpu.py), the GPU benchmark with RapidFlow on the same host (issue 13's table),
# then static counts beside gMatch and EGSM on a 20M-edge Chung-Lu graph (issue 18).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
export PYTHONPATH=/tmp/new:/tmp/site
cp .devrun/c3.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/suite-b bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/suite-b.log 2>&1
echo "suite b rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/suite-b.log
mkdir -p $R/bench
timeout -k 5 $(( 440 - $(el) )) python3 -P bench/gpu_bench.py --out $R/bench --data .shdata \
    --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/bench/gpu-bench.log 2>&1
echo "gpu bench rc $? at $(el) s" | tee -a $R/time.txt
P="--gmatch .peers/bin/gmatch --gmatch-unlabeled .peers/bin/gmatch-unlabeled --egsm .peers/bin/egsm"
left=$(( 585 - $(el) ))
[ $left -gt 60 ] && [ -x .peers/bin/gmatch ] && timeout -k 5 $left python3 -P bench/static_bench.py --sets "" \
    --chunglu-edges 20000000 --chunglu-shapes triangle,clique4 --no-cpu $P --peer-limit 40 \
    --out $R/chunglu-20m.json > $R/chunglu-20m.log 2>&1
echo "peers rc $? at $(el) s" | tee -a $R/time.txt; tail -5 $R/chunglu-20m.log
