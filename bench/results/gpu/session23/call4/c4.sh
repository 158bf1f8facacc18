#!/usr/bin/env bash
# Session 23, call 4 (main 43ddb24): 7 updater warps (n_updaters=7) against the default 4 in
# turns: the oracle count rows, the response rows, the 43M triangle and 4-cycle; then what a
# light batch's jobs wait on: the helpers off (HELP_MASK=0u) and idle warps polling 8x as
# often (VIEW_NS=1000, WAIT_NS_MAX=1024).
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export DCSM_SHARED_DATA=$PWD/.shdata PYTHONPATH=/tmp/m
for run in "base 1 -" "nu7 1 - n_updaters=7" "base 2 -" "nu7 2 - n_updaters=7" "base 3 -" "nu7 3 - n_updaters=7" \
           "nohelp 1 -DHELP_MASK=0u" "poll8x 1 -DVIEW_NS=1000+-DWAIT_NS_MAX=1024"; do
  set -- $run; name=$1-$2; defs=${3//+/ }; [ "$defs" = "-" ] && defs=""; shift 3
  [ $(el) -gt 120 ] && continue
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 60 python3 -P .devrun/knob.py "$@" -- bench/gpu_bench.py --out $R/oracle-$name --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$name.log 2>&1
  echo "oracle $name [$defs $*] rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$name | tee -a $R/time.txt
done
for run in "base" "nu7 n_updaters=7"; do
  set -- $run; name=$1; shift
  timeout -k 5 60 python3 -P .devrun/knob.py "$@" -- bench/gpu_bench.py --out $R/latency-$name --data .shdata --skip-search --sustain-updates 0 > $R/latency-$name.log 2>&1
  echo "latency $name rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency-$name/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
done
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
for run in "triangle nu7 1 n_updaters=7" "triangle base 3" "triangle nu7 2 n_updaters=7" "4cycle nu7 1 n_updaters=7"; do
  set -- $run; p=$1; name=$1-$2-$3; shift 3; [ $(el) -gt 480 ] && continue
  timeout -k 5 $(( 590 - $(el) )) python3 -P .devrun/knob.py "$@" -- bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $p \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$name.json > $R/$name.log 2>&1
  echo "$name rc $? at $(el) s: $(tail -1 $R/$name.log)" | tee -a $R/time.txt
  python3 -c "import json; r=json.load(open('$R/$name.json'))['rows'][0]; u=r['updater']; print('   load', r['load_s'], 'read', u.get('step_input_read_s'), 'run', u.get('step_input_run_s'), 'slots', u.get('step_input_slots_s'), 'batches', u.get('batches'), 'compactions', r['pools'][-1]['compactions'], 'compiled', r.get('compiled'))" 2>&1 | tee -a $R/time.txt
done
