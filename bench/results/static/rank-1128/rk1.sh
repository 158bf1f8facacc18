#!/usr/bin/env bash
# 2026-11-28 seventh session: branch gpu-rank-cycles (.base-rank), the GPU label counter
# counting labelled cycles from each match's highest-ranked vertex. Carry: .devrun .whl-gpu
# .shdata .base-rank .base-main. 1) its GPU tests (labelled, slices, every writing, the
# beside matcher); 2) label_count_ab at 43M edges, 8 labels, ranked then main's on one graph;
# 3) static_bench at 1M (with the device search) and 43M (with the CPU engine on 16 cores).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
for b in rank main; do
  rm -rf /tmp/$b
  python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/$b .base-$b >/dev/null 2>&1 || exit 1
done
cp .devrun/rk1.sh $R/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
(cd .base-rank && PYTHONPATH=/tmp/rank:/tmp/site DCSM_SHARED_DATA=../.shdata timeout -k 5 200 python3 -P -m pytest tests/gpu/test_gpu_static.py -q -p no:cacheprovider --confcutdir=tests/gpu \
    -k "labelled or past_64 or beside" > $R/rk-tests.log 2>&1)
echo "tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/rk-tests.log
PYTHONPATH=/tmp/rank:/tmp/site timeout -k 5 150 python3 -P .base-rank/bench/debug/label_count_ab.py --edges 43000000 --labels 8 --variants 512:16 \
    --patterns lcycle6,lcycle4,lcycle5 --write-graph /tmp/g43l.npz --out $R/ab-rank.json > $R/ab-rank.log 2>&1
echo "ab rank rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/ab-rank.log
PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 100 python3 -P .base-main/bench/debug/label_count_ab.py --graph /tmp/g43l.npz --variants 512:16 \
    --patterns lcycle6,lcycle4,lcycle5 --out $R/ab-main.json > $R/ab-main.log 2>&1
echo "ab main rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/ab-main.log
rm -f /tmp/g43l.npz
export PYTHONPATH=/tmp/rank:/tmp/site
timeout -k 5 80 python3 -P .base-rank/bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-labels 8 \
    --chunglu-shapes lcycle4,lcycle5,lcycle6 --search --out $R/rk-1m.json > $R/rk-1m.log 2>&1
echo "1m rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/rk-1m.log
left=$(( 585 - $(el) ))
[ $left -gt 100 ] && timeout -k 5 $left python3 -P .base-rank/bench/static_bench.py --sets "" --chunglu-edges 43000000 --chunglu-labels 8 \
    --chunglu-shapes lcycle6,lcycle4,lcycle5 --repeat 2 --cpu-max-edges 50000000 --out $R/rk-43m.json > $R/rk-43m.log 2>&1
echo "43m rc $? at $(el) s" | tee -a $R/time.txt; tail -5 $R/rk-43m.log
