#!/usr/bin/env bash
# 2026-11-28 eighth session, last call: the ring counter's rows beside gMatch and EGSM on
# one host (built at 8acf4e5 and de854d5 with the edits in bench/results/static/README.md),
# main's code: Chung-Lu 1M (triangle, cycle4, diamond), enron, Chung-Lu 20M (cycle4,
# diamond). Carry: .devrun .whl-gpu .shdata .peers/bin.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc6.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
P="--gmatch .peers/bin/gmatch --gmatch-unlabeled .peers/bin/gmatch-unlabeled --egsm .peers/bin/egsm"
echo "code: $(cat .devrun/head)" | tee $R/time.txt
timeout -k 5 60 python3 -P bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-shapes triangle,cycle4,diamond --no-cpu $P --peer-limit 10 --out $R/cl1m-peers.json > $R/cl1m.log 2>&1
echo "cl1m rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/cl1m-peers.md | cut -d'|' -f3,8,12-17
timeout -k 5 80 python3 -P bench/static_bench.py --data .shdata --sets enron --no-cpu $P --peer-limit 8 --out $R/enron-peers.json > $R/enron.log 2>&1
echo "enron rc $? at $(el) s" | tee -a $R/time.txt; tail -10 $R/enron-peers.md | cut -d'|' -f3,8,12-17
timeout -k 5 $(( 262 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes cycle4,diamond --no-cpu $P --peer-limit 12 --out $R/cl20m-peers.json > $R/cl20m.log 2>&1
echo "cl20m rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/cl20m-peers.md | cut -d'|' -f3,8,12-17
