#!/usr/bin/env bash
# Session 28 call 6 (main 66e8bcf, the final engine): first the oracle count rows
# beside RapidFlow's median (nothing run before them on the machine); the response rows;
# then the GPU tests calls 4 and 5 did not run on this engine. Carry: .dev28 .peers/bin/RapidFlow.out
source .dev28/common.sh
cp .dev28/c6.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | tee -a $R/time.txt
# the same rows without RapidFlow between them: does a row measured right after RapidFlow's
# runs (as above) take longer?
PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 > $R/oracle.log 2>&1
echo "oracle rows alone rc $? at $(el) s" | tee -a $R/time.txt; python3 .dev28/summ.py $R/oracle | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/resp --data /tmp/shd --skip-search > $R/resp.log 2>&1
echo "response rows rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^\| (oracle|insertion|[0-9])" $R/resp/gpu_bench.md | head -12 | tee -a $R/time.txt
export DCSM_SHARED_DATA=/tmp/shd
DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu \
    -k "not (controls_dated or register_and_unregister or long_runs or registered_mid_stream or random_streams)" > $R/tests.log 2>&1
echo "the other GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
