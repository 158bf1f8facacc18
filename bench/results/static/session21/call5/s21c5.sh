#!/usr/bin/env bash
# Session 21 call 5: the scratch budget. Main (f072b5d's kernels, SCRATCH_MAX 16 GiB) at
# 16 and 32 GiB with 8,192 hub roots, and branch hub-budget (79cbec1: SCRATCH_MAX 32 GiB):
#  1. the 20M and 43M 4-cycles (one label) at 512:16 and 512:32;
#  2. the 43M labelled 6-cycle and 4-cycle (8 labels), which the budget also sizes
#     (cycle_roots' blocks), at 512:16 and 512:32;
#  3. the 20M rings with the CPU engine beside, on the branch (the 50x).
# Prepare: .devrun/b (the branch's tree), call 4's kernel cache. Carry: .devrun
source .devrun/common-nowhl.sh
cp .devrun/s21c5.sh $R/; nvidia-smi -L > $R/device.txt
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-m.md5
echo "installed at $(el) s" | tee -a $R/time.txt
AB=bench/debug/label_count_ab.py
ab() { local tag=$1 lim=$2; shift 2; PYTHONPATH=/tmp/m timeout -k 5 $lim python3 -P $AB "$@" --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s" | tee -a $R/time.txt; cut -c1-420 $R/$tag.log | tee -a $R/time.txt; }
ab ab20 80 --edges 20000000 --labels 1 --variants 512:16,512:32 --patterns cycle4 --repeat 3 --phases
ab ab43 90 --edges 43000000 --labels 1 --variants 512:16,512:32 --patterns cycle4 --repeat 3 --phases
ab ab43l 120 --edges 43000000 --labels 8 --variants 512:16,512:32 --patterns lcycle6,lcycle4 --repeat 3
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 130 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M rings with the CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
