#!/usr/bin/env bash
# Written in the fifteenth session for the next one: branch next-kernel (d9d54ba, on main
# a1a6fa5), never run on a device. Its changes (the last ones behind knobs):
#  - read-once: updater warp 0 reads a long run of records 128 a round (read_wide) and
#    checked the update slots before each round (two dependent loads of device memory); it
#    now checks once for the whole run waiting (slot_free_upto: slot_free is monotone in tau
#    and stays true). The oracle rows' batches of ~6,200 records took 174 us each to read
#    (session15 call 3, step_input_read), ~27 % of a batch;
#  - FUSE_EDIT_ALLOC 1: J_SEGEDIT and J_ALLOC run as one job after allocate(), one job less
#    a batch (a job's fixed cost is ~13-19 us on small batches);
#  - FUSE_PUBLISH_COUNT 1: J_COUNT's tasks run in J_PUBLISH's job, reading endpoints' lists
#    from the batch's segments instead of head (CHECK=1 compares them once published);
#  - MERGE_PREFETCH 2 and MERGE_SPEC 1 possible (defaults 1 and 0): for the 4-cycle, nextO.sh.
#  1. The branch's engine test file (its kernel built cold: 8 shards first), then the
#     oracle and long-run tests;
#  2. the oracle count rows in turns: main, the branch, the branch at FUSE_EDIT_ALLOC=0 and
#     at FUSE_PUBLISH_COUNT=0; input read us a batch and step times in each gpu_bench.json's
#     "updater"; then the response part of main and the branch.
# Prepare: git archive --format=tar --prefix=.base-nk/ next-kernel | tar x && rm -rf .base-nk/bench/results .base-nk/docs
# Copy into .devrun/ with ../../session14/common.sh as .devrun/common.sh.
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-nk
source .devrun/common.sh
rm -rf /tmp/m /tmp/nk
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/nk .base-nk >/dev/null 2>&1 || exit 1
cp .devrun/nextN.sh $R/; nvidia-smi -L > $R/device.txt
export DCSM_SHARED_DATA=$PWD/.shdata
PYTHONPATH=/tmp/nk:/tmp/site DCSM_PREWARM=8 DCSM_RESULTS=$R/suite-engine timeout -k 5 360 bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/suite-engine.log 2>&1
echo "branch engine tests rc $? at $(el) s: $(tail -1 $R/suite-engine/gpu-tests.log)" | tee -a $R/time.txt
PYTHONPATH=/tmp/nk:/tmp/site timeout -k 5 $(( 450 - $(el) )) python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py > $R/tests-oracle.log 2>&1
echo "branch oracle/long-run tests rc $? at $(el) s: $(tail -1 $R/tests-oracle.log)" | tee -a $R/time.txt
for run in "oracle m 1" "oracle nk 1" "oracle nk 1 -DFUSE_EDIT_ALLOC=0" "oracle nk 1 -DFUSE_PUBLISH_COUNT=0" "oracle m 2" "oracle nk 2" \
           "oracle nk 2 -DFUSE_EDIT_ALLOC=0" "oracle nk 2 -DFUSE_PUBLISH_COUNT=0" "latency nk 1" "latency m 1"; do
  set -- $run; d=${4:-}; tag=$2$(echo "$d" | tr -d '=-'); [ $(el) -gt $([ $1 = latency ] && echo 540 || echo 570) ] && continue
  if [ $1 = oracle ]; then
    DCSM_KERNEL_DEFINES="$d" PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$tag-$3 --data .shdata --oracle-count-only --skip-latency > $R/oracle-$tag-$3.log 2>&1
  else
    PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 50 python3 -P bench/gpu_bench.py --out $R/latency-$2-$3 --data .shdata --skip-search > $R/latency-$2-$3.log 2>&1
  fi
  echo "$1 $tag $3 rc $? at $(el) s" | tee -a $R/time.txt
  [ $1 = oracle ] && python3 -c "import json,sys; u=json.load(open(sys.argv[1]))['updater'][0]; print('input read us/batch', round(u['step_input_read_us'],1), 'segedit', round(u.get('step_segedit_us',0),1), 'alloc', round(u.get('step_alloc_us',0),1), 'publish', round(u.get('step_publish_us',0),1), 'count', round(u.get('step_count_us',0),1), 'batches', u['batches'], 'mean', round(u['mean_batch']))" $R/oracle-$tag-$3/gpu_bench.json
  [ $1 = latency ] && grep -E "t=0\)" $R/latency-$2-$3/gpu_bench.md | head -4 | cut -c1-120
done
