#!/usr/bin/env bash
# Session 2026-11-28b, call 1: backfill beside the stream, main (ddc15b2) vs poll_waits; then
# kill -9 chaos with the GPU backend.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new /tmp/base
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/base .base-main >/dev/null 2>&1 || exit 1
NEW=/tmp/new:/tmp/site; BASE=/tmp/base:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
PYTHONPATH=$NEW python3 -P -c "import dcsm.service.app, dcsm.gpu.engine; print('imports ok')" 2>&1 | tail -2
echo "setup at $(el) s" | tee -a $R/time.txt
i=0
for b in base new base new; do
    i=$((i+1))
    [ $(el) -lt 300 ] || break
    P=$NEW; S=.; [ $b = base ] && { P=$BASE; S=.base-main; }
    PYTHONPATH=$P timeout -k 5 100 python3 -P $S/bench/backfill_beside.py --backend gpu --edges 200000 --updates 16000 \
        --rate 2000 --backfill-at 2 --out $R/bf-$i-$b > $R/bf-$i-$b.log 2>&1
    echo "bf $i $b rc $? at $(el) s" | tee -a $R/time.txt
done
left=$(( 560 - $(el) ))
if [ $left -gt 90 ]; then
    PYTHONPATH=$NEW timeout -k 5 $left python3 -P bench/chaos.py --kills 8 --updates 20000 --seed 1 --backend gpu \
        --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
    echo "chaos rc $? at $(el) s" | tee -a $R/time.txt
fi
