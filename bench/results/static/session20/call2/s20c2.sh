#!/usr/bin/env bash
# Session 20 call 2: branch wedge-tables (.devrun/b, 58e53e6): the whole graph's diamonds by
# its triangles (diamond_triangles, edge_pairs); wedge_parts sized from a root's wedges with
# its first round's ranges kept, capped at 3 blocks of 512 an SM (b2: ptxas' own registers).
#  1. branch: the ring and 4-cycle tests;
#  2. 20M Chung-Lu: 4-cycle and diamond phases, branch (hub caps 8192, 2000), b2, main;
#  3. branch: 20M cycle4, diamond, tailed4 with the CPU engine (16 cores) same call;
#  4. bench/debug/atomic_rate.py (the hub phase's atomics on their own).
# Carry: .devrun
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b /tmp/b2 /tmp/src2
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
cp -r .devrun/b /tmp/src2 && sed -i 's/PARTS_BOUNDS wedge_parts(/LC_BOUNDS wedge_parts(/' /tmp/src2/gpu/ring_count.cuh
(cd /tmp/src2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b2 . >/dev/null 2>&1) || exit 1
cp .devrun/s20c2.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-m.md5; (cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-b.md5
grep -c "LC_BOUNDS wedge_parts" /tmp/src2/gpu/ring_count.cuh > $R/b2-sed.txt
echo "installed at $(el) s" | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    -k "ring or triangles_stay or four_cycles or hub_roots" > $R/tests-b.log 2>&1); echo "branch ring tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests-b.log | head -10 | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 120 python3 -P .devrun/b/bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
    --variants 512:16,512:16:2000 --patterns cycle4,diamond --repeat 2 --phases --write-graph /tmp/g20.npz \
    --out $R/ab20-b.json > $R/ab20-b.log 2>&1; echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/b2 timeout -k 5 90 python3 -P .devrun/b/bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 2 --phases --out $R/ab20-b2.json > $R/ab20-b2.log 2>&1
echo "ab20 b2 rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b2.log | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 90 python3 -P bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4,diamond --repeat 2 --phases --out $R/ab20-m.json > $R/ab20-m.log 2>&1
echo "ab20 main rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-m.log | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 150 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M static branch with CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 $(( 560 - $(el) )) python3 -P .devrun/b/bench/debug/atomic_rate.py --out $R/atomic.json > $R/atomic.log 2>&1
echo "atomic_rate rc $? at $(el) s" | tee -a $R/time.txt; cat $R/atomic.log | tee -a $R/time.txt
