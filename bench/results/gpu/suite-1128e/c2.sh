#!/usr/bin/env bash
# Session of 2026-11-28 09:21 (fifth), call 2: GPU suite part 1 (tests/gpu/test_engine_gpu.py)
# on main with the merged branches and the cycle kernel's long rows; then the long-row A/B of
# the cycle kernel at 43M edges (bench/debug/label_count_ab.py).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
export PYTHONPATH=/tmp/new:/tmp/site
cp .devrun/c2.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/suite-a bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/suite-a.log 2>&1
echo "suite a rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/suite-a.log
left=$(( 585 - $(el) ))
[ $left -gt 60 ] && timeout -k 5 $left python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 8 \
    --variants 512:16:0,512:16:64,512:16:256,512:16:1024,512:16:0 --patterns lcycle6,lcycle4 --repeat 2 \
    --out $R/long-rows-43m.json > $R/long-rows-43m.log 2>&1
echo "long rows rc $? at $(el) s" | tee -a $R/time.txt; tail -12 $R/long-rows-43m.log
