#!/usr/bin/env bash
# Written in session 26 for the next one (not run): the three engine tests no device has run
# on the final kernel (1c085dc: shared hub bitmaps carved from the slab pool). Each tails
# test compiles its own self-checking kernel (SMALL_PROBE=2): give them ~100 s each.
# Prepare: .devrun/common-nowhl.sh (bench/results/gpu/session17/common-nowhl.sh) and the
#   kernel cache of the last call as .devrun/cupy-cache.tgz.a*. Carry: .devrun
source .devrun/common-nowhl.sh
cp bench/results/gpu/session26/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
DCSM_SUITE_SECONDS=400 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "tails_appended_and_merged and 8 or update_slots_wait or larger_than_pool" > $R/tests.log 2>&1
echo "the engine tests not yet run on the final kernel: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
