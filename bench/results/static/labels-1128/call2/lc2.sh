#!/usr/bin/env bash
# Call 2, 2026-11-28 fourth session: the cycle kernel's block size and scratch budget at 43M
# (bench/debug/label_count_ab.py), then 6-vertex labelled backfills through the service on
# the GPU engine beside the stream (bench/backfill_beside.py) and the control.
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
cp .devrun/lc2.sh $R/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 200 python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 8 --variants 256:8,256:32,512:16,1024:8,1024:32 --patterns lcycle6,lcycle4 --write-graph /tmp/g43l.npz --out $R/ab-43m.json > $R/ab-43m.log 2>&1
echo "ab rc $? at $(el) s" | tee -a $R/time.txt
tail -12 $R/ab-43m.log
[ -f /tmp/g43l.npz ] || exit 1
BF="--backend gpu --graph /tmp/g43l.npz --updates 24000 --rate 2000 --backfill-at 2"
for v in lpath6: lcycle6: lcycle6:--no-backfill; do
    p=${v%%:*}; fl=${v#*:}
    [ $(el) -lt 450 ] || break
    tag=$p${fl:+-control}
    timeout -k 5 140 python3 -P bench/backfill_beside.py $BF --pattern $p $fl --out $R/bf-$tag > $R/bf-$tag.log 2>&1
    echo "bf $tag rc $? at $(el) s" | tee -a $R/time.txt
    grep -h '"seconds"\|backfill' $R/bf-$tag.log | tail -3
done
