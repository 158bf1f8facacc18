#!/usr/bin/env bash
# Session 25 call 4: main with shared, carved hub bitmaps (c6b93de and after): the whole
# engine test file (self-checks compiled in where the tests ask), kernels prewarmed.
# Carry: .devrun
source .devrun/common-nowhl.sh
cp .devrun/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
DCSM_PREWARM=12 DCSM_SUITE_SECONDS=275 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py > $R/tests.log 2>&1
echo "engine tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
