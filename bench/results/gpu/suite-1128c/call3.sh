#!/usr/bin/env bash
# Call 3 of the third session of 2026-11-28: the GPU suite on main (84423e5+: the beside
# matcher's count kernels capped, scan_find_live in apply_small, the host's decode/drain/result
# changes of the second session); then the beside backfill on main as it is, and with the cap
# at 8 (32 registers) and 5 (48: ptxas' own count, with a launch bound) through the env.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
NEW=/tmp/new:/tmp/site
cp .devrun/call3.sh $R/
git log --oneline -1 > $R/code.txt 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$NEW DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/gpu bash scripts/gpu-suite.sh --tests > /dev/null 2>&1
echo "suite rc $? at $(el) s" | tee -a $R/time.txt
tail -3 $R/gpu/gpu-tests.log
BF="--backend gpu --edges 200000 --updates 16000 --rate 2000 --backfill-at 2"
for v in main mb8 mb5 main; do
    [ $(el) -lt 520 ] || break
    env=""; case $v in mb8) env="-DCOUNT_MIN_BLOCKS=8";; mb5) env="-DCOUNT_MIN_BLOCKS=5";; esac
    PYTHONPATH=$NEW DCSM_STATIC_DEFINES="$env" timeout -k 5 $(( 590 - $(el) )) python3 -P bench/backfill_beside.py $BF --out $R/bf-$v-$(el) > $R/bf-$v.log 2>&1
    echo "bf $v rc $? at $(el) s" | tee -a $R/time.txt
done
