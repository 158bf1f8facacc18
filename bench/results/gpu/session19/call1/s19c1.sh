#!/usr/bin/env bash
# Session 19 call 1: nextS2 (session18/next) with the branch applied from .devrun/cng.patch on a copy of the tree.
# Written in the eighteenth session for the next one (not run): branch compact-not-grow
# (dca2e45; its diff also in next/compact-not-grow.patch, for a checkout without the branch:
# `git apply` it on a41b574). A self-sized slab pool full only by its bump region is compacted
# instead of grown. Of 20 runs of the 43M triangle insertion in sessions 15-18 (pool sized
# 11,586,560 slabs at load), the 10 whose pool grew mid-insertion (to 15,063,040: 8.7 GB,
# 2.5x the bytes in use) ran at 6.10-7.60M updates/s, 6.64M on average; the 10 whose pool did
# not at 6.78-8.19M, 7.66M on average (bench/results/gpu/session18/README.md, "Next").
#  1. the engine tests that grow and compact pools, and the random streams, on the branch;
#  2. the 43M triangle, main (/tmp/m) and the branch (/tmp/b) in turns, four each, and the
#     4-cycle once each: rate, pool_slabs after the insertion, pool_compactions.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh .devrun/; this script as .devrun/nextS2.sh;
#   the branch's tree: git archive compact-not-grow | tar x -C .devrun/b (or apply the patch to
#   a copy of the tree there); a kernel cache of session 18 as .devrun/cupy-cache.tgz.aa.
# Carry: .devrun .whl-gpu
source .devrun/common-nowhl.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
rm -rf /tmp/bsrc; mkdir /tmp/bsrc; tar c --exclude=./bench/results --exclude=./.devrun --exclude=./.whl-gpu --exclude=./.git . | tar x -C /tmp/bsrc; (cd /tmp/bsrc && patch -p1 < $OLDPWD/.devrun/cng.patch > $R/patch.log 2>&1) || exit 1
(cd /tmp/bsrc && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
cp .devrun/s19c1.sh .devrun/cng.patch $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.py gpu/*.cuh gpu/*.cu dcsm/*.py > $R/files-main.md5
(cd /tmp/bsrc && PYTHONPATH=/tmp/b:/tmp/site timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_engine_gpu.py \
    -k "grow or compact or random_streams or several_updater" > $R/tests-b.log 2>&1); echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
PYTHONPATH=/tmp/m:/tmp/site timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
for run in "triangle m 1" "triangle b 1" "triangle m 2" "triangle b 2" "4cycle b 1" "triangle m 3" "triangle b 3" "4cycle m 1" "triangle m 4" "triangle b 4"; do
  set -- $run; [ $(el) -gt 530 ] && continue
  PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 $3 rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2-$3.json'))['rows'][0]; p=r['pools'][-1]; print('   pool_slabs', p['pool_slabs'], 'bump', p['slab_bump'], 'compactions', p['compactions'])" 2>&1 | tee -a $R/time.txt
done
