#!/usr/bin/env bash
# Call 4, 2026-11-28 fourth session: main's defaults at 43M (label_count_ab 512:16) and the
# labelled 6-vertex backfills beside the stream with the kernel relaunched first.
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
cp .devrun/lc4.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 150 python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 8 --variants 512:16 --patterns lcycle6,lcycle4 --write-graph /tmp/g43l.npz --out $R/ab-43m.json > $R/ab-43m.log 2>&1
echo "ab rc $? at $(el) s" | tee -a $R/time.txt
tail -3 $R/ab-43m.log
BF="--backend gpu --graph /tmp/g43l.npz --updates 24000 --rate 2000 --backfill-at 2"
for p in lpath6 lcycle6; do
    [ $(el) -lt 330 ] || break
    timeout -k 5 120 python3 -P bench/backfill_beside.py $BF --pattern $p --out $R/bf-$p > $R/bf-$p.log 2>&1
    echo "bf $p rc $? at $(el) s" | tee -a $R/time.txt
done
