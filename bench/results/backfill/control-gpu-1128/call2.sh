#!/usr/bin/env bash
# Call 2 of the third session of 2026-11-28: branch hub-bits (.base-hub: git archive of it)
# GPU tests; the beside backfill with static_count's registers capped (COUNT_MIN_BLOCKS=6);
# 4-cycle rows hub_bits 0 vs 1024 on 10M and 43M-edge Chung-Lu graphs.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/hub
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/hub .base-hub >/dev/null 2>&1 || exit 1
cp .devrun/call2.sh $R/
HUB=/tmp/hub:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
(cd .base-hub && PYTHONPATH=$HUB timeout -k 5 260 python3 -P -m pytest tests/gpu/test_hub_bits.py -x -q -p no:cacheprovider \
    --confcutdir=tests/gpu --durations 5 > $R/hub-tests.log 2>&1)
echo "hub tests rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/hub-tests.log
BF="--backend gpu --edges 200000 --updates 16000 --rate 2000 --backfill-at 2"
PYTHONPATH=$HUB DCSM_STATIC_DEFINES=-DCOUNT_MIN_BLOCKS=6 timeout -k 5 120 python3 -P .base-hub/bench/backfill_beside.py $BF --out $R/bf-mb6 > $R/bf-mb6.log 2>&1
echo "bf mb6 rc $? at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$HUB timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 10000000 --out /tmp/g10.npz > $R/gen10.log 2>&1
echo "g10 at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$HUB timeout -k 5 150 python3 -P .base-hub/bench/scale_up_bench.py --backend gpu --graph /tmp/g10.npz \
    --patterns 4cycle --gpu-hub-bits 0,1024,256 --out $R/g10-hub.json > $R/g10-hub.log 2>&1
echo "g10 rows rc $? at $(el) s" | tee -a $R/time.txt
if [ $(el) -lt 330 ]; then
    PYTHONPATH=$HUB timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --out /tmp/g43.npz > $R/gen43.log 2>&1
    echo "g43 at $(el) s" | tee -a $R/time.txt
    left=$(( 580 - $(el) ))
    PYTHONPATH=$HUB timeout -k 5 $left python3 -P .base-hub/bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
        --patterns 4cycle --gpu-hub-bits 1024,0 --out $R/g43-hub.json > $R/g43-hub.log 2>&1
    echo "g43 rows rc $? at $(el) s" | tee -a $R/time.txt
fi
