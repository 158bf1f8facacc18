#!/usr/bin/env bash
# Session 19 call 6: tailed triangles counted by the label counter (ring_count.cuh
# tailed_pairs, uncommitted in the tree: each triangle from its lowest rank, weighed by its
# vertices' other fitting neighbours):
#  1. the ring tests (every ring against the CPU engine and the search, over slices too);
#  2. the 20M Chung-Lu tailed triangle: tailed_pairs, the device search (--search) and the
#     CPU engine on this host's 16 cores, same call;
#  3. the oracle count rows with RapidFlow on the same host (the final engine code).
# Carry: .devrun .shdata/oracle-github   (.devrun/rf: the RapidFlow binary; .devrun/cupy-cache.tgz.aa: call 3's cache)
source .devrun/common-nowhl.sh  # no wheel needed (static_bench, gpu_bench, the static tests)
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s19c6.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
timeout -k 5 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py -k "ring or triangles_stay or four_cycles or hub_roots" > $R/tests.log 2>&1
echo "ring tests rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests.log | head -10 | tee -a $R/time.txt
timeout -k 5 150 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 --chunglu-shapes tailed4 --search \
    --cpu-max-edges 30000000 --out $R/chunglu-20m-tailed4.json > $R/chunglu-20m-tailed4.log 2>&1
echo "20M tailed triangle rc $? at $(el) s" | tee -a $R/time.txt; grep -i "tailed4" $R/chunglu-20m-tailed4.md | tee -a $R/time.txt
[ $(el) -lt 330 ] && { timeout -k 5 $(( 380 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .devrun/rf/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
  echo "oracle with RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt; }
