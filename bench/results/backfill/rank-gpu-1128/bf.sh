#!/usr/bin/env bash
# 2026-11-28 seventh session, call 5: issue 18's 6-vertex backfill on a 43M-edge graph
# beside the stream, with the ranked label counter on main: the labelled 6-cycle with a
# backfill, then the control (the same registration, no backfill). Carry: .devrun .whl-gpu.
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
cp .devrun/bf.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 --out /tmp/g43l.npz > $R/gen.log 2>&1
echo "gen rc $? at $(el) s" | tee -a $R/time.txt
BF="bench/backfill_beside.py --backend gpu --graph /tmp/g43l.npz --updates 16000 --rate 2000 --backfill-at 2 --pattern lcycle6"
timeout -k 5 100 python3 -P $BF --out $R/bf-lcycle6 > $R/bf-lcycle6.log 2>&1
echo "bf lcycle6 rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/bf-lcycle6.log
[ $(el) -lt 170 ] && timeout -k 5 $(( 250 - $(el) )) python3 -P $BF --no-backfill --out $R/bf-control > $R/bf-control.log 2>&1
echo "bf control rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/bf-control.log
