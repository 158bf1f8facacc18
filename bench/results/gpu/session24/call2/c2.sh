#!/usr/bin/env bash
# Session 24 call 2: branch hub-bits (hub bitmaps for the last level's membership tests)
# against main (e8653ad): the 43M 4-cycle in turns, knob HUB_BITS_DIV, the 43M triangle once
# on main (host path merged), an oracle count run of the branch, then the branch's tests
# that build bitmaps (self-checks on) and the oracle tests.
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-m.md5
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 env PYTHONPATH=/tmp/m python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "b 4cycle 1 -" "m 4cycle 1 -" "b 4cycle div256 -DHUB_BITS_DIV=256" "b 4cycle 2 -" "m triangle 1 -"; do
  set -- $run; defs=${4//+/ }; [ "$defs" = "-" ] && defs=""; [ $(el) -gt 330 ] && continue
  PYTHONPATH=/tmp/$1 DCSM_KERNEL_DEFINES="$defs" timeout -k 5 100 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $2 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 $3 [$defs] rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2-$3.json'))['rows'][0]; u=r['updater']; print('   load', r['load_s'], 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'merged', u.get('merged_levels'), 'bitmaps', u.get('hub_bitmaps'), 'mem', r['pools'][-1]['engine_memory_bytes'])" 2>&1 | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_PREWARM=8 DCSM_SUITE_SECONDS=$(( 570 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py -k "hub_bitmaps or merged_count_alike or hub_vertex or random" > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
