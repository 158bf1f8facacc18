#!/usr/bin/env bash
# Session 21 call 2: branch hub-bytes (f072b5d: byte counters for the w whose rows hold at
# most 255 entries, 16-bit ones above, in wedge_hubs' narrow arrays), on top of hub-rows
# (HUB_CHUNK 2, hub_rows; call 1).
#  1. the whole static test file on the branch;
#  2. the 20M 4-cycle's phases: the branch at 8, 16 GiB (8,192 hub roots), 16 and 32 GiB
#     with 16,384 hub roots; hub-rows (call 1's code) at 16 GiB, on one graph;
#  3. the 20M rings with the CPU engine beside (the 50x);
#  4. the 43M 4-cycle at 16 and 32 GiB, as the time allows.
# Prepare: .devrun/b (the branch's tree), .devrun/h (hub-rows' label_count.py and
#   ring_count.cuh), call 1's kernel cache. Carry: .devrun
source .devrun/common-nowhl.sh
cp .devrun/s21c2.sh $R/; nvidia-smi -L > $R/device.txt
rm -rf /tmp/b /tmp/h /tmp/hs; cp -r .devrun/b /tmp/hs; cp .devrun/h/label_count.py .devrun/h/ring_count.cuh /tmp/hs/gpu/
(cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
(cd /tmp/hs && md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-h.md5 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/h . >/dev/null 2>&1) || exit 1
echo "installed at $(el) s" | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 360 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py > $R/tests-b.log 2>&1)
echo "branch static tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests-b.log | head -10 | tee -a $R/time.txt
AB=.devrun/b/bench/debug/label_count_ab.py
PYTHONPATH=/tmp/b timeout -k 5 90 python3 -P $AB --edges 20000000 --labels 1 --variants 512:8,512:16,512:16:16384,512:32:16384 \
    --patterns cycle4 --repeat 3 --phases --write-graph /tmp/g20.npz --out $R/ab20-b.json > $R/ab20-b.log 2>&1
echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/h timeout -k 5 60 python3 -P $AB --graph /tmp/g20.npz --labels 1 --variants 512:16 \
    --patterns cycle4 --repeat 3 --phases --out $R/ab20-h.json > $R/ab20-h.log 2>&1
echo "ab20 hub-rows rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-h.log | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 130 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M rings with the CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
[ $(el) -lt 470 ] && { PYTHONPATH=/tmp/b timeout -k 5 $(( 570 - $(el) )) python3 -P $AB --edges 43000000 --labels 1 \
    --variants 512:16,512:32:16384 --patterns cycle4 --repeat 2 --phases --out $R/ab43-b.json > $R/ab43-b.log 2>&1
  echo "ab43 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab43-b.log | tee -a $R/time.txt; }
