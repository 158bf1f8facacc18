#!/usr/bin/env bash
# Session 24 call 4: the branch's final defaults (one hub bitmap an executor warp, none
# while no query of 4+ vertices counts): the 43M 4-cycle and triangle (memory), the hub
# bitmap tests (the mid-stream registration test among them, not yet run on a device).
source .devrun/common-nowhl.sh
rm -rf /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 env PYTHONPATH=/tmp/b python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "b 4cycle 3" "b triangle 2"; do
  set -- $run
  PYTHONPATH=/tmp/b timeout -k 5 80 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $2 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 $3 rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2-$3.json'))['rows'][0]; u=r['updater']; p=r['pools'][-1]; print('   load', r['load_s'], 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'merged', u.get('merged_levels'), 'bitmaps', u.get('hub_bitmaps'), 'of', p.get('hub_slots'), 'mem', p['engine_memory_bytes'], 'used', p['used_bytes'])" 2>&1 | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_SUITE_SECONDS=$(( 225 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py -k "hub_bitmaps or merged_count_alike" > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
