#!/usr/bin/env bash
# Session 26 call 3 (main 1c085dc, the final kernel): the engine tests no device has run on
# it (test_tails_appended_and_merged[1, 8] and [0] again, test_update_slots_wait_for_the_collector,
# test_graph_larger_than_pool_is_rejected); then the search rows beside RapidFlow on the same
# host: oracle-github (count and embedding), enron labeled5 (count and embedding), enron
# unlabeled (count), issue 13.
# Carry: .devrun (kernel cache, shd.tar.xz: the shared data's oracle-github and enron) .peers/bin/RapidFlow.out
export NO_CACHE_BACK=1; source .devrun/common-nowhl.sh
cp .devrun/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .devrun/shd.tar.xz -C /tmp/shd
DCSM_SUITE_SECONDS=180 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "tails_appended or update_slots_wait or larger_than_pool" > $R/tests.log 2>&1
echo "the engine tests no device ran on the final kernel: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
timeout -k 5 $(( 588 - $(el) )) python3 -P bench/gpu_bench.py --out $R/search-rf --data /tmp/shd --skip-latency \
    --repeat 3 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 50 > $R/search-rf.log 2>&1
echo "search rows beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
grep -A8 "^| dataset | mode" $R/search-rf/gpu_bench.md | tee -a $R/time.txt
python3 .devrun/summ.py $R/search-rf 2>&1 | tee -a $R/time.txt
