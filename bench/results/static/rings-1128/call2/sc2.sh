#!/usr/bin/env bash
# 2026-11-28 eighth session, call 2: ring_pairs a lane a pair (the warp for long pairs) and
# the snapshot's own rows for rings over every vertex. 1) the ring tests; 2) static_bench
# with --search: enron, Chung-Lu 1M, Chung-Lu 20M (triangle, tailed4, diamond; cycle4
# without the search) with the CPU engine on the host's cores; 3) 20M, 8 labels, abcycle4
# with the CPU engine. Carry: .devrun .whl-gpu .shdata.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc2.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 150 python3 -P -m pytest tests/gpu/test_gpu_static.py -k "ring" -q -p no:cacheprovider --confcutdir=tests/gpu --timeout 120 > $R/rings.log 2>&1
echo "ring tests rc $? at $(el) s" | tee -a $R/time.txt; tail -25 $R/rings.log
timeout -k 5 60 python3 -P bench/static_bench.py --data .shdata --sets enron --search --out $R/enron.json > $R/enron.log 2>&1
echo "enron rc $? at $(el) s" | tee -a $R/time.txt; tail -10 $R/enron.md | cut -d'|' -f3,8-12
timeout -k 5 60 python3 -P bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-shapes triangle,cycle4,tailed4,diamond --search --out $R/cl1m.json > $R/cl1m.log 2>&1
echo "cl1m rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/cl1m.md | cut -d'|' -f3,8-12
timeout -k 5 200 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,tailed4,diamond --search --cpu-max-edges 30000000 --out $R/cl20m.json > $R/cl20m.log 2>&1
echo "cl20m rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/cl20m.md | cut -d'|' -f3,8-12
timeout -k 5 $(( 420 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes cycle4 --cpu-max-edges 30000000 --out $R/cl20m-c4.json > $R/cl20m-c4.log 2>&1
echo "cl20m c4 rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/cl20m-c4.md | cut -d'|' -f3,8-12
timeout -k 5 $(( 560 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-labels 8 --chunglu-shapes abcycle4 --cpu-max-edges 30000000 --out $R/cl20m-ab.json > $R/cl20m-ab.log 2>&1
echo "cl20m ab rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/cl20m-ab.md | cut -d'|' -f3,8-12
