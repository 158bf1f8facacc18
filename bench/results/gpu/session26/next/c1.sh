#!/usr/bin/env bash
# Written in session 26 for the next one (not run). First the oracle rows beside RapidFlow,
# now its median over five runs a light row (bench/rapidflow.py), before any test (session
# 26's call 3 ran its rows after the tests, with every updater step ~1.7x as long); then the
# three engine tests no device has run on the final kernel (1c085dc). Each tails test
# compiles its own self-checking kernel (SMALL_PROBE=2): ~100 s each.
# Prepare: .devrun/common-nowhl.sh (bench/results/gpu/session17/common-nowhl.sh), the kernel
#   cache of the last call as .devrun/cupy-cache.tgz.a*, and the shared data packed small
#   enough to travel beside it: (cd ../shared/data && tar cJf <repo>/.devrun/shd.tar.xz
#   README.md oracle-github enron/labeled5 enron/unlabeled). Carry: .devrun .peers/bin/RapidFlow.out
source .devrun/common-nowhl.sh
cp bench/results/gpu/session26/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .devrun/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 580 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "tails_appended_and_merged and 8 or update_slots_wait or larger_than_pool" > $R/tests.log 2>&1
echo "the engine tests not yet run on the final kernel: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
