#!/usr/bin/env bash
# Session 22 call 4: branch bulk-read at 0bd2186 (this tree: read_run 64 records a part, the
# compaction rehearsed at load) against main (.devrun/m), kernel cache of call 3.
#  1. the oracle count rows, --repeat 5, in turns, RapidFlow beside the branch's second;
#  2. the 43M triangle (branch, main, branch) and 4-cycle (branch);
#  3. the engine test file on the branch (gpu-suite.sh, prewarm shards) in the time left.
# Carry: .devrun .shdata .peers/bin
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
cp .devrun/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.py gpu/*.cuh gpu/*.cu bench/*.py > $R/files-b.md5
(cd .devrun/m && md5sum gpu/*.py gpu/*.cuh gpu/*.cu) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
for run in "m 1" "b 1" "m 2" "b 2"; do
  set -- $run
  RF=""; [ "$1$2" = "b2" ] && RF="--rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15"
  PYTHONPATH=/tmp/$1 timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/oracle-$1-$2 --data .shdata --oracle-count-only --skip-latency --repeat 5 $RF > $R/oracle-$1-$2.log 2>&1
  echo "oracle $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  python3 -c "import json; r=[x for x in json.load(open('$R/oracle-$1-$2/gpu_bench.json'))['search'] if x['query']!='all at once']; print('  ', len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's, equal to the published:', sum(x.get('peer_matches')==x['matches'] for x in r), 'rf', round(sum(x.get('rapidflow_same_host_s') or 0 for x in r),4))" 2>&1 | tee -a $R/time.txt
done
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
PYTHONPATH=/tmp/b timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "triangle b 1" "triangle m 1" "triangle b 2" "4cycle b 1"; do
  set -- $run; [ $(el) -gt 230 ] && continue
  PYTHONPATH=/tmp/$2 timeout -k 5 80 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 $3 rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2-$3.json'))['rows'][0]; u=r['updater']; print('   load', r['load_s'], 'read', u.get('step_input_read_s'), 'run', u.get('step_input_run_s'), 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'compactions', r['pools'][-1]['compactions'], 'compiled', r.get('compiled'))" 2>&1 | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_PREWARM=12 DCSM_RESULTS=$R/suite timeout -k 5 $(( 575 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/suite.log 2>&1
echo "engine tests rc $? at $(el) s: $(tail -1 $R/suite/gpu-tests.log)" | tee -a $R/time.txt
