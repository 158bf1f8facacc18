#!/usr/bin/env bash
# Session 20 call 3: branch wedge-tables (.devrun/b, 6d8b904): wedge_hubs walks hubs eight
# at a time in a scattered order (b2: HUB_GROUP 1, one hub at a time, scattered within it).
#  1. branch: the whole static test file (tests/gpu/test_gpu_static.py);
#  2. 20M Chung-Lu 4-cycle phases: branch, b2, main (the same graph);
#  3. branch: 20M cycle4, diamond, tailed4 with the CPU engine (16 cores) same call;
#  4. 43M Chung-Lu 4-cycle and diamond phases, branch and main, if the time allows.
# Carry: .devrun .shdata/oracle-github .shdata/citeseer
source .devrun/common-nowhl.sh
TOP=$PWD
rm -rf /tmp/m /tmp/b /tmp/b2 /tmp/src2
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
cp -r .devrun/b /tmp/src2 && sed -i 's/^#define HUB_GROUP 8$/#define HUB_GROUP 1/' /tmp/src2/gpu/ring_count.cuh
(cd /tmp/src2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b2 . >/dev/null 2>&1) || exit 1
cp .devrun/s20c3.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-m.md5; (cd .devrun/b && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-b.md5
grep -c "define HUB_GROUP 1" /tmp/src2/gpu/ring_count.cuh > $R/b2-sed.txt
echo "installed at $(el) s" | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b DCSM_SHARED_DATA=$TOP/.shdata timeout -k 5 280 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    > $R/tests-b.log 2>&1); echo "branch static tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests-b.log | head -10 | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 100 python3 -P .devrun/b/bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
    --variants 512:16 --patterns cycle4,diamond --repeat 3 --phases --write-graph /tmp/g20.npz \
    --out $R/ab20-b.json > $R/ab20-b.log 2>&1; echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/b2 timeout -k 5 60 python3 -P .devrun/b/bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 3 --phases --out $R/ab20-b2.json > $R/ab20-b2.log 2>&1
echo "ab20 b2 rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b2.log | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 3 --phases --out $R/ab20-m.json > $R/ab20-m.log 2>&1
echo "ab20 main rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-m.log | tee -a $R/time.txt
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 130 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M static branch with CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
if [ $(el) -lt 420 ]; then
PYTHONPATH=/tmp/b timeout -k 5 $(( 540 - $(el) )) python3 -P .devrun/b/bench/debug/label_count_ab.py --edges 43000000 --labels 1 \
    --variants 512:16 --patterns cycle4,diamond --repeat 2 --phases --write-graph /tmp/g43.npz \
    --out $R/ab43-b.json > $R/ab43-b.log 2>&1; echo "ab43 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab43-b.log | tee -a $R/time.txt
[ -f /tmp/g43.npz ] && [ $(el) -lt 530 ] && { PYTHONPATH=/tmp/m timeout -k 5 $(( 580 - $(el) )) python3 -P bench/debug/label_count_ab.py --graph /tmp/g43.npz --labels 1 \
    --variants 512:16 --patterns cycle4,diamond --repeat 2 --phases --out $R/ab43-m.json > $R/ab43-m.log 2>&1
  echo "ab43 main rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab43-m.log | tee -a $R/time.txt; }
fi
