#!/usr/bin/env bash
# Written in session 25 for the next one (not run): what the final code (main after
# e82393e: shared hub bitmaps carved from the slab pool) has not yet run on a device.
#  1. the engine tests session 25's call 4 did not reach: test_tails_appended_and_merged[0,
#     1, 8], test_update_slots_wait_for_the_collector, test_graph_larger_than_pool_is_rejected;
#  2. the 43M triangle (with a churn of 10x the batch: pool usage over time) and 4-cycle
#     beside RapidFlow in the same call (issue 17, item 6: rapidflow_same_host_s per row).
# Prepare: .devrun/common-nowhl.sh (bench/results/gpu/session17/common-nowhl.sh), session
#   25's kernel cache (call 4) as .devrun/cupy-cache.tgz.a*; RapidFlow built in .peers/bin
#   (session 22's README). Carry: .devrun .peers/bin/RapidFlow.out
source .devrun/common-nowhl.sh
cp bench/results/gpu/session25/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
DCSM_SUITE_SECONDS=150 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "tails_appended or update_slots_wait or larger_than_pool or give_the_pool_back or hub_bitmaps" > $R/tests.log 2>&1
echo "the engine tests call 4 did not reach: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
for run in "triangle --churn 10" "4cycle"; do
  set -- $run; p=$1; shift
  timeout -k 5 $(( 590 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $p "$@" \
      --batch-size 1048576 --static-cache /tmp/static43.json --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 60 \
      --out $R/$p-rf.json > $R/$p-rf.log 2>&1
  echo "$p rc $? at $(el) s: $(tail -1 $R/$p-rf.log)" | tee -a $R/time.txt
done
