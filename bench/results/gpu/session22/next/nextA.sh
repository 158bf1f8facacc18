#!/usr/bin/env bash
# Written in the twenty-second session for a later one (not run): what session 22 could not
# run on its final code (main after 6e92b1e) for lack of device time.
#  1. the whole GPU suite (tests/gpu: the static, oracle and long-run files too; the engine
#     file passed, 73 of 73, in session 22's call 4);
#  2. the response rows (at these rates a paced stream seldom leaves 1,024 records waiting,
#     so read_run should rarely run there: call 1 measured the first version only);
#  3. the oracle count rows beside RapidFlow, median of five.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh .devrun/; a kernel cache as
#   .devrun/cupy-cache.tgz.aa (session 22's is not kept); .shdata = ../shared/data;
#   RapidFlow built in .peers/bin (see bench/results/gpu/session22/README.md).
# Carry: .devrun .shdata .peers/bin
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
DCSM_PREWARM=12 DCSM_RESULTS=$R/suite timeout -k 5 450 bash scripts/gpu-suite.sh --tests tests/gpu > $R/suite.log 2>&1
echo "GPU suite rc $? at $(el) s: $(tail -1 $R/suite/gpu-tests.log)" | tee -a $R/time.txt
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search --sustain-updates 0 > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
timeout -k 5 $(( 585 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows rc $? at $(el) s" | tee -a $R/time.txt
