#!/usr/bin/env bash
# Session 2026-11-28b, call 2: backfill beside the stream, polled waits (main) vs a
# blocking-sync event wait (evt_patch.py), alternating; one polled run under py-spy --gil;
# then labelled 6-vertex backfills beside the stream on a 43M-edge graph.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new /tmp/evt
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
cp -r /tmp/new /tmp/evt && python3 .devrun/evt_patch.py /tmp/evt || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
git log --oneline -1 > $R/code.txt
echo "setup at $(el) s" | tee -a $R/time.txt
BF="bench/backfill_beside.py --backend gpu --edges 200000 --updates 16000 --rate 2000 --backfill-at 2"
i=0
for b in poll evt poll evt; do
    i=$((i+1))
    [ $(el) -lt 200 ] || break
    PYTHONPATH=/tmp/$([ $b = poll ] && echo new || echo evt):/tmp/site timeout -k 5 100 python3 -P $BF \
        --out $R/bf-$i-$b > $R/bf-$i-$b.log 2>&1
    echo "bf $i $b rc $? at $(el) s" | tee -a $R/time.txt
done
if [ $(el) -lt 230 ]; then
    PYTHONPATH=/tmp/new:/tmp/site timeout -k 5 100 /tmp/site/bin/py-spy record --gil --threads --nonblocking --rate 200 \
        -f raw -o $R/bf-gil.raw -- python3 -P $BF --out $R/bf-5-poll-pyspy > $R/bf-5-poll-pyspy.log 2>&1
    echo "bf 5 pyspy rc $? at $(el) s" | tee -a $R/time.txt
    gzip -f $R/bf-gil.raw
fi
PYTHONPATH=/tmp/new:/tmp/site timeout 90 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 \
    --out /tmp/g43l.npz > $R/gen.log 2>&1
echo "gen rc $? at $(el) s" | tee -a $R/time.txt
for p in lcycle6 lpath6; do
    left=$(( 570 - $(el) ))
    [ $left -gt 60 ] || break
    PYTHONPATH=/tmp/new:/tmp/site timeout -k 5 $left python3 -P bench/backfill_beside.py --backend gpu --graph /tmp/g43l.npz \
        --pattern $p --updates 16000 --rate 2000 --backfill-at 2 --out $R/g43l-$p > $R/g43l-$p.log 2>&1
    echo "g43l $p rc $? at $(el) s" | tee -a $R/time.txt
done
