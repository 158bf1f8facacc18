#!/usr/bin/env bash
# Session 25 call 3: branch carve (hub bitmaps shared by the items testing one list at one
# tau, carved from the slab pool's free top) against main 52ac029 (.devrun/m) on the 43M
# 4-cycle in turns; the branch with at most 500 bitmaps; the 43M triangle; the branch's
# engine tests on bitmaps, pool growth and compaction.
# Carry: .devrun
source .devrun/common-nowhl.sh
cp .devrun/c3.sh $R/
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-m.md5
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 env PYTHONPATH=/tmp/m python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "b 4cycle 1" "m 4cycle 1" "b 4cycle 2" "b triangle 1" "b 4cycle k500"; do
  set -- $run; [ $(el) -gt 280 ] && continue
  src=$([ $1 = m ] && echo .devrun/m/bench || echo bench); knob=""; [ $3 = k500 ] && knob="hub_bitmaps=500"
  PYTHONPATH=/tmp/$1 timeout -k 5 90 python3 -P .devrun/knob.py $knob -- $src/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $2 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 $3 [$knob] rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2-$3.json'))['rows'][0]; u=r['updater']; p=r['pools'][-1]; print('   load', r['load_s'], 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'built', u.get('hub_bitmaps'), 'of', p.get('hub_slots'), 'carved', p.get('hub_carved_slabs'), 'pool', p['pool_slabs'], 'bump', p['slab_bump'], 'looks', p['looks'], 'mem', p['engine_memory_bytes'], 'used', p['used_bytes'], 'x', round(p['engine_memory_bytes']/p['used_bytes'],3), 'peak', r['device_used_peak_bytes'])" 2>&1 | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_SUITE_SECONDS=$(( 580 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py -k "hub_bitmaps or merged_count_alike or grow or compact or backpressure or exhaustion" > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
