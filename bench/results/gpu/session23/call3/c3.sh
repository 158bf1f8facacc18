#!/usr/bin/env bash
# Session 23, call 3 (main 43ddb24): what a light batch's jobs wait on. The oracle count rows
# with the helpers off (HELP_MASK=0: the 4 updater warps run every task), with idle warps
# polling 8x as often (VIEW_NS 1000, WAIT_NS_MAX 1024), and with 7 updater warps, each beside
# the defaults, the updater's steps a batch printed; then the 43M triangle (twice) and
# 4-cycle insertions.
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export DCSM_SHARED_DATA=$PWD/.shdata PYTHONPATH=/tmp/m
for run in "base 1 -" "nohelp 1 -DHELP_MASK=0u" "poll8x 1 -DVIEW_NS=1000_-DWAIT_NS_MAX=1024" "nu7 1 - n_updaters=7" "base 2 -" "nu7 2 - n_updaters=7" "poll8x 2 -DVIEW_NS=1000_-DWAIT_NS_MAX=1024"; do
  set -- $run; name=$1-$2; defs=${3//_/ }; [ "$defs" = "-" ] && defs=""; shift 3
  [ $(el) -gt 250 ] && continue
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 90 python3 -P .devrun/knob.py "$@" -- --out $R/oracle-$name --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$name.log 2>&1
  echo "oracle $name [$defs $*] rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$name | tee -a $R/time.txt
done
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "triangle 1" "triangle 2" "4cycle 1"; do
  set -- $run; [ $(el) -gt 500 ] && continue
  timeout -k 5 $(( 590 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$1-$2.json'))['rows'][0]; u=r['updater']; print('   load', r['load_s'], 'read', u.get('step_input_read_s'), 'run', u.get('step_input_run_s'), 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'compactions', r['pools'][-1]['compactions'], 'compiled', r.get('compiled'))" 2>&1 | tee -a $R/time.txt
done
