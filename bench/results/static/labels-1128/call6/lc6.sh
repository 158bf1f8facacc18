#!/usr/bin/env bash
# Call 6, 2026-11-28 fourth session: the first service process on a fresh machine stalls the
# stream at its first backfill registration (0.74 s) and later ones do not (58-67 ms):
# py-spy on the first process, to see what it compiles or loads then.
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
cp .devrun/lc6.sh $R/
ls -la ~/.cupy/kernel_cache 2>&1 | head -3 > $R/cache-before.txt
echo "setup at $(el) s" | tee -a $R/time.txt
timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 --out /tmp/g43l.npz > $R/gen.log 2>&1
echo "gen rc $? at $(el) s" | tee -a $R/time.txt
BF="bench/backfill_beside.py --backend gpu --graph /tmp/g43l.npz --updates 12000 --rate 2000 --backfill-at 2"
timeout -k 5 110 /tmp/site/bin/py-spy record --idle --threads --nonblocking --rate 250 -f speedscope -o $R/first.speedscope.json -- python3 -P $BF --pattern lpath6 --out $R/bf-1-lpath6-first > $R/bf-1.log 2>&1
echo "bf 1 rc $? at $(el) s" | tee -a $R/time.txt
gzip $R/first.speedscope.json
