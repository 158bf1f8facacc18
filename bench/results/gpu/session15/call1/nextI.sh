#!/usr/bin/env bash
# Written in the fourteenth session for the next one: main with PIVOT_MIN (merged off: at 0 the
# cubin is main's before it). An executor's membership tests that all search one
# list start in the gap of 32 warp pivots of its base run (6 dependent steps instead of 8
# for 27K entries). The 4-cycle is executor-bound (issue 17 asks 280K/s, main 251-260K).
#  1. The GPU tests at PIVOT_MIN=1 (every list pivoted, the test graphs' lists being short),
#     the kernel cache first filled by shards (tests/gpu/kernel_prewarm.py);
#  2. the 43M 4-cycle and triangle, PIVOT_MIN 0 / 64 / 512 in turns;
#  3. the oracle count rows, 0 against 64, in turns.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/nextI.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
(timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" && touch -d @1795916919.826114635 /tmp/g43.npz) &
F="tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py"
(DCSM_KERNEL_DEFINES=-DPIVOT_MIN=1 python3 -P tests/gpu/kernel_prewarm.py --shards 8 --timeout 200 --logs $R/prewarm -- $F > $R/prewarm.log 2>&1)
wait
echo "prewarm at $(el) s: $(tail -1 $R/prewarm.log)" | tee -a $R/time.txt
(DCSM_KERNEL_DEFINES=-DPIVOT_MIN=1 timeout -k 5 $(( 360 - $(el) )) python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu $F --durations=5 > $R/tests.log 2>&1)
echo "tests at PIVOT_MIN=1 rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
for run in "4cycle -DPIVOT_MIN=64" "4cycle -DPIVOT_MIN=0" "4cycle -DPIVOT_MIN=512" "triangle -DPIVOT_MIN=64" "triangle -DPIVOT_MIN=0" \
           "4cycle -DPIVOT_MIN=64" "4cycle -DPIVOT_MIN=0"; do
  set -- $run; p=$1; d=$2; [ $(el) -gt 500 ] && break
  n=$(ls $R/$p$d-*.json 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 $(( 585 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $p \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$p$d-$n.json > $R/$p$d-$n.log 2>&1
  echo "$p $d run $n rc $? at $(el) s: $(tail -1 $R/$p$d-$n.log)" | tee -a $R/time.txt
done
for turn in 1 2; do
  for d in -DPIVOT_MIN=64 -DPIVOT_MIN=0; do
    [ $(el) -gt 570 ] && break 2
    DCSM_KERNEL_DEFINES=$d timeout -k 5 25 python3 -P bench/gpu_bench.py --out $R/oracle$d-$turn --data .shdata --oracle-count-only --skip-latency > $R/oracle$d-$turn.log 2>&1
    echo "oracle $d turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  done
done
