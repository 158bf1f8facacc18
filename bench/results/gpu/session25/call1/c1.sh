#!/usr/bin/env bash
# Session 25 call 1 (main e749044): the final hub-bitmap host rules on the 43M 4-cycle and
# triangle; two memory probes (an explicit pool of 8.0M slabs with a bitmap a warp; half
# the bitmaps, 1,584, with the self-sized pool); the oracle rows beside RapidFlow; the bitmap
# tests and the GPU tests session 23 did not reach.
# Carry: .devrun .shdata/oracle-github .peers/bin/RapidFlow.out
source .devrun/common-nowhl.sh
cp .devrun/c1.sh $R/
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py dcsm/engine/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "4cycle 1 -" "triangle 1 -" "4cycle tight pool_slabs=8000256" "4cycle half hub_bitmaps=1584" "4cycle 2 -"; do
  set -- $run; [ $(el) -gt 260 ] && continue; knob=$3; [ $knob = - ] && knob=""
  timeout -k 5 90 python3 -P .devrun/knob.py $knob -- bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 [$knob] rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2.json'))['rows'][0]; u=r['updater']; p=r['pools'][-1]; print('   load', r['load_s'], 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'bitmaps', u.get('hub_bitmaps'), 'of', p.get('hub_slots'), 'pool', p['pool_slabs'], 'bump', p['slab_bump'], 'mem', p['engine_memory_bytes'], 'used', p['used_bytes'], 'x', round(p['engine_memory_bytes']/p['used_bytes'],3), 'peak', r['device_used_peak_bytes'])" 2>&1 | tee -a $R/time.txt
done
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-rf | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 575 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py -k "hub_bitmaps or merged_count_alike" > $R/tests.log 2>&1
echo "hub tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 585 - $(el) )) DCSM_RESULTS=$R/rest bash scripts/gpu-suite.sh --tests tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py \
    tests/gpu/test_gpu_static.py -k "small_wedge_tables or hub_roots_as_many or triangles_stay_with or pool_usage_stays_flat or oracle or long" > $R/rest.log 2>&1
echo "the tests session 23 did not reach: rc $? at $(el) s: $(tail -1 $R/rest/gpu-tests.log)" | tee -a $R/time.txt
