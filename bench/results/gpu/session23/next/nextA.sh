#!/usr/bin/env bash
# Written in session 23 for a later one (not run): what session 23's last call could not
# finish on the final code (main 2d5e529; gpu/ as at 517023b).
#  1. the 16 GPU tests its suite did not reach (call 6 stopped at test 288 of 303, every one
#     before passed): test_gpu_static.py's last 13, test_long_run.py, test_oracle_gpu.py;
#  2. the oracle count rows beside RapidFlow (call 6's ran right after the suite, every
#     updater step ~2x the session's other calls and RapidFlow 7 % slower: not used);
#  3. the 43M triangle (twice) and 4-cycle insertions on the final code.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh bench/results/gpu/session23/summ.py
#   .devrun/; the kernel cache of the last call as .devrun/cupy-cache.tgz.aa; .shdata =
#   ../shared/data; RapidFlow built in .peers/bin (session 22's README).
# Carry: .devrun .shdata .peers/bin
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py dcsm/engine/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
DCSM_SUITE_SECONDS=240 DCSM_RESULTS=$R/rest bash scripts/gpu-suite.sh --tests tests/gpu/test_gpu_static.py \
    -k "small_wedge_tables or hub_roots_as_many or triangles_stay_with or pool_usage_stays_flat or oracle" tests/gpu/test_long_run.py tests/gpu/test_oracle_gpu.py > $R/rest.log 2>&1
echo "the tests call 6 did not reach: rc $? at $(el) s: $(tail -1 $R/rest/gpu-tests.log)" | tee -a $R/time.txt
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-rf | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
for run in "triangle 1" "triangle 2" "4cycle 1"; do
  set -- $run; [ $(el) -gt 500 ] && continue
  timeout -k 5 $(( 590 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
done
