#!/usr/bin/env bash
# Call 5, 2026-11-28 fourth session: why a labelled 6-path's short backfill holds the stream
# at 43M (lcycle6's does not): lcycle6 first (is it the first service process?), lpath6
# under py-spy (speedscope: every thread's samples in order, idle ones too), lpath6 again.
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
cp .devrun/lc5.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 --out /tmp/g43l.npz > $R/gen.log 2>&1
echo "gen rc $? at $(el) s" | tee -a $R/time.txt
BF="bench/backfill_beside.py --backend gpu --graph /tmp/g43l.npz --updates 16000 --rate 2000 --backfill-at 2"
timeout -k 5 100 python3 -P $BF --pattern lcycle6 --out $R/bf-1-lcycle6 > $R/bf-1.log 2>&1
echo "bf 1 lcycle6 rc $? at $(el) s" | tee -a $R/time.txt
timeout -k 5 110 /tmp/site/bin/py-spy record --idle --threads --nonblocking --rate 250 -f speedscope -o $R/lpath6.speedscope.json -- python3 -P $BF --pattern lpath6 --out $R/bf-2-lpath6-pyspy > $R/bf-2.log 2>&1
echo "bf 2 lpath6 pyspy rc $? at $(el) s" | tee -a $R/time.txt
[ $(el) -lt 240 ] && timeout -k 5 90 python3 -P $BF --pattern lpath6 --out $R/bf-3-lpath6 > $R/bf-3.log 2>&1
echo "bf 3 lpath6 rc $? at $(el) s" | tee -a $R/time.txt
gzip $R/lpath6.speedscope.json 2>/dev/null
