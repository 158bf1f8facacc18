#!/usr/bin/env bash
# Session 21 call 3: branch hub-bytes at a4960d8 (hub_items a warp a candidate, with each
# hub's wedges at most; hub_wedges_per_word cuts the hubs where those fall below so many
# a word of their arrays; 0, as main, by default).
#  1. the ring and 4-cycle static tests on the branch;
#  2. the 20M and 43M 4-cycles: 16 GiB (8,192 hub roots) as in call 2, and 32 GiB with
#     16,384 hub roots at hub_wedges_per_word 0 to 0.8, on one graph each.
# Prepare: .devrun/b (the branch's tree), call 2's kernel cache. Carry: .devrun
source .devrun/common-nowhl.sh
cp .devrun/s21c3.sh $R/; nvidia-smi -L > $R/device.txt
rm -rf /tmp/b
(cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
echo "installed at $(el) s" | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 220 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    -k "ring or triangles_stay or four_cycles or hub_roots" > $R/tests-b.log 2>&1)
echo "branch ring tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests-b.log | head -10 | tee -a $R/time.txt
AB=.devrun/b/bench/debug/label_count_ab.py
V=512:16,512:32:16384:65535:0,512:32:16384:65535:0.1,512:32:16384:65535:0.2,512:32:16384:65535:0.3,512:32:16384:65535:0.5,512:32:16384:65535:0.8
PYTHONPATH=/tmp/b timeout -k 5 120 python3 -P $AB --edges 20000000 --labels 1 --variants $V \
    --patterns cycle4 --repeat 3 --phases --out $R/ab20-b.json > $R/ab20-b.log 2>&1
echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cut -c1-330 $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 150 python3 -P $AB --edges 43000000 --labels 1 --variants $V \
    --patterns cycle4 --repeat 2 --phases --out $R/ab43-b.json > $R/ab43-b.log 2>&1
echo "ab43 branch rc $? at $(el) s" | tee -a $R/time.txt; cut -c1-330 $R/ab43-b.log | tee -a $R/time.txt
