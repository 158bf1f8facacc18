#!/usr/bin/env bash
# Written in the sixteenth session for the next one: branch host-pipeline (ef47c00 and on,
# never run on a device; its kernel is main's: cubin md5 6b5f942b) and what call 3 of the
# sixteenth did not run serially on main.
#  1. The branch's engine test file, the kernel cache from call 3 (main's kernels: warm),
#     with its new tests: growth within an apply and the pools' growth with each next piece
#     admitted in the admission thread, and an admission error raised after that thread;
#  2. main: tests/gpu without the engine file (static tests with citeseer carried this
#     time, long-run, oracle).
# Prepare: git archive --format=tar --prefix=.base-hp/ host-pipeline | tar x && rm -rf .base-hp/bench/results .base-hp/docs
#   cp bench/results/gpu/session16/common.sh .devrun/common.sh; the cache part of session
#   16's call 3 as .devrun/cupy-cache.tgz.aa (nothing else named cupy-cache.tgz* there).
# Carry: .devrun .whl-gpu .shdata/oracle-github .shdata/citeseer .base-hp
source .devrun/common.sh
rm -rf /tmp/m /tmp/hp
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/hp .base-hp >/dev/null 2>&1 || exit 1
cp .devrun/nextP1.sh $R/; nvidia-smi -L > $R/device.txt
export DCSM_SHARED_DATA=$PWD/.shdata
( cd .base-hp && PYTHONPATH=/tmp/hp:/tmp/site DCSM_RESULTS=$R/suite-hp-engine timeout -k 5 300 \
    bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py ) > $R/suite-hp-engine.log 2>&1
echo "branch engine tests rc $? at $(el) s: $(tail -1 $R/suite-hp-engine/gpu-tests.log)" | tee -a $R/time.txt
PYTHONPATH=/tmp/m:/tmp/site DCSM_RESULTS=$R/suite-rest timeout -k 5 $(( 560 - $(el) )) \
    bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/suite-rest.log 2>&1
echo "main, the rest of the suite rc $? at $(el) s: $(tail -1 $R/suite-rest/gpu-tests.log)" | tee -a $R/time.txt
