#!/usr/bin/env bash
# 2026-11-28 eighth session, call 4: wedge_small (a warp a small 4-cycle root, counts in
# shared memory) between wedge_hubs and wedge_roots; diamonds alone on the ring counter.
# 1) the ring tests; 2) label_count_ab at 20M and 43M edges, one label: cycle4 with hub
# roots 0/1024, diamond, phases; 3) static_bench: enron and 1M with --search, 20M against
# the CPU engine, 20M 8 labels abcycle4. Carry: .devrun .whl-gpu .shdata.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/sc4.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 150 python3 -P -m pytest tests/gpu/test_gpu_static.py -k "ring or four_cycles or random_graph or triangles" -q -p no:cacheprovider --confcutdir=tests/gpu --timeout 120 > $R/rings.log 2>&1
echo "ring tests rc $? at $(el) s" | tee -a $R/time.txt; tail -15 $R/rings.log
for E in 20000000 43000000; do
timeout -k 5 150 python3 -P bench/debug/label_count_ab.py --edges $E --labels 1 --variants 512:16:0,512:16:1024 \
    --patterns cycle4,diamond --repeat 2 --phases --out $R/ab-$E.json > $R/ab-$E.log 2>&1
echo "ab $E rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab-$E.log | cut -c1-330
done
timeout -k 5 40 python3 -P bench/static_bench.py --data .shdata --sets enron --search --out $R/enron.json > $R/enron.log 2>&1
echo "enron rc $? at $(el) s" | tee -a $R/time.txt; tail -10 $R/enron.md | cut -d'|' -f3,8-12
timeout -k 5 40 python3 -P bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-shapes triangle,cycle4,tailed4,diamond --search --out $R/cl1m.json > $R/cl1m.log 2>&1
echo "cl1m rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/cl1m.md | cut -d'|' -f3,8-12
timeout -k 5 120 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,cycle4,tailed4,diamond --cpu-max-edges 30000000 --out $R/cl20m.json > $R/cl20m.log 2>&1
echo "cl20m rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/cl20m.md | cut -d'|' -f3,8-12
timeout -k 5 $(( 560 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-labels 8 --chunglu-shapes abcycle4 --cpu-max-edges 30000000 --out $R/cl20m-ab.json > $R/cl20m-ab.log 2>&1
echo "cl20m ab rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/cl20m-ab.md | cut -d'|' -f3,8-12
