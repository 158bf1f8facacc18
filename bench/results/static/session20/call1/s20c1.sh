#!/usr/bin/env bash
# Session 20 call 1: branch wedge-tables (.devrun/b, 05ee394): a 4-cycle's roots below the
# hubs counted in shared-memory tables (wedge_small, wedge_parts) instead of wedge_roots'
# global count arrays; diamond_pairs/tailed_pairs on the shared walk (walk_pairs on walk_rows).
#  1. branch: the ring and 4-cycle tests (every ring against the CPU engine and the search,
#     slices; tiny tables forcing parts to halve);
#  2. 20M Chung-Lu 4-cycle phases: branch at hub caps 8192 (budget), 2000, 1000, 0; main;
#  3. branch: 20M cycle4, diamond, tailed4 with the CPU engine (16 cores) same call.
# Carry: .devrun
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
cp .devrun/s20c1.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-m.md5; (cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-b.md5
echo "installed at $(el) s" | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    -k "ring or triangles_stay or four_cycles or hub_roots" > $R/tests-b.log 2>&1); echo "branch ring tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests-b.log | head -10 | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 150 python3 -P .devrun/b/bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
    --variants 512:16,512:16:2000,512:16:1000,512:16:0 --patterns cycle4 --repeat 2 --phases --write-graph /tmp/g20.npz \
    --out $R/ab20-b.json > $R/ab20-b.log 2>&1; echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 90 python3 -P bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 2 --phases --out $R/ab20-m.json > $R/ab20-m.log 2>&1
echo "ab20 main rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-m.log | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 $(( 560 - $(el) )) python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M static branch with CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
