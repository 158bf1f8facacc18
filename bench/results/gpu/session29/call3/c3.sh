#!/usr/bin/env bash
# Session 29 call 3 (main with the two fusions: the final engine): first on the machine the
# oracle count rows beside RapidFlow's median (gpu_bench now runs a workload's RapidFlow rows
# after its GPU rows), the same rows alone, the response rows, then the GPU tests calls 2
# and session 28's call 6 did not run on this engine (prewarmed kernel cache).
# Carry: .dev28 .peers/bin/RapidFlow.out
source .dev28/common.sh
cp bench/results/gpu/session29/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 > $R/oracle.log 2>&1
echo "oracle rows alone rc $? at $(el) s" | tee -a $R/time.txt; python3 .dev28/summ.py $R/oracle | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/resp --data /tmp/shd --skip-search > $R/resp.log 2>&1
echo "response rows rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^\| (oracle|insertion|[0-9])" $R/resp/gpu_bench.md | head -12 | tee -a $R/time.txt
export DCSM_SHARED_DATA=/tmp/shd
DCSM_PREWARM=8 DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_long_run.py tests/gpu/test_oracle_gpu.py tests/gpu/test_gpu_static.py \
    -k "(test_engine_gpu and not (random_streams or several_updater or hub_vertex or pool_backpressure or self_checks or controls_dated or register_and)) or test_long_run or test_oracle_gpu or small_wedge_tables or hub_roots_as_many or triangles_stay" > $R/tests.log 2>&1
echo "the other GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
