#!/usr/bin/env bash
# Written in the fourteenth session for the next one (main at the session's end).
#  1. The 43M triangle with py-spy on the host (--idle: waits too): the host path is 77.5
#     ns an update and the updater ~70, yet the rate is 145 ns an update (6.3-6.9M/s), as if
#     the two took turns. Which host step waits for what?
#  2. The light rows' per-job cost: the jobs that do a few loads an element take 13-19 us
#     each whatever the batch; an idle executor notices a job through its block's view,
#     refreshed every VIEW_NS (8 us), and sleeps up to WAIT_NS_MAX (8,192 ns) between polls.
#     The oracle count rows and the response part, VIEW_NS and WAIT_NS_MAX in turns (their
#     values were set on 2026-11-25's kernel, before the short path and most jobs changed).
#  3. Count rows placed while the pump reads them (b3fd79c: CallResult.result had ~14 ms
#     of work an apply of 1M updates after the last completion, the device idle meanwhile):
#     the 43M triangle, main against the code before it (.base-prev), in turns; then main
#     with pieces of 16,384 updates (gpu/engine.py _PIECE, 4,096: each piece has its fixed
#     Python steps, and a 1M apply has 256 pieces).
# Prepare: git archive --format=tar --prefix=.base-prev/ 66c1132 | tar x && rm -rf .base-prev/bench/results .base-prev/docs
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-prev     (.whl-gpu holds the py-spy wheel)
source .devrun/common.sh
rm -rf /tmp/m /tmp/mp; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mp .base-prev >/dev/null 2>&1 || exit 1
cp .devrun/nextH.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz
echo "graph ready at $(el) s" | tee -a $R/time.txt
SPY=/tmp/site/bin/py-spy
for run in 1 2; do
  P="python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --batch-size 1048576 --static-cache /tmp/static43.json --out $R/triangle-$run.json"
  if [ $run = 1 ] && [ -x $SPY ]; then
    timeout -k 5 150 $SPY record --idle --threads --rate 1000 --format raw -o $R/triangle-spy.raw -- $P > $R/triangle-$run.log 2>&1
  else
    timeout -k 5 150 $P > $R/triangle-$run.log 2>&1
  fi
  echo "triangle run $run rc $? at $(el) s: $(tail -1 $R/triangle-$run.log)" | tee -a $R/time.txt
done
[ -f $R/triangle-spy.raw ] && python3 -P bench/profile_summary.py $R/triangle-spy.raw --rate 1000 --top 8 > $R/triangle-spy.md 2>&1
for turn in 1 2; do
  for v in prev main; do
    site=/tmp/m; [ $v = prev ] && site=/tmp/mp
    PYTHONPATH=$site:/tmp/site timeout -k 5 100 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle \
        --batch-size 1048576 --static-cache /tmp/static43.json --out $R/triangle-$v-$turn.json > $R/triangle-$v-$turn.log 2>&1
    echo "triangle $v turn $turn rc $? at $(el) s: $(tail -1 $R/triangle-$v-$turn.log)" | tee -a $R/time.txt
  done
done
PYTHONPATH=/tmp/m:/tmp/site timeout -k 5 100 python3 -P -c "
import runpy, sys
import dcsm.gpu.engine as e
e._PIECE = 16384
sys.argv = ['scale_up_bench.py'] + sys.argv[1:]
runpy.run_path('bench/scale_up_bench.py', run_name='__main__')" --backend gpu --graph /tmp/g43.npz --patterns triangle \
    --batch-size 1048576 --static-cache /tmp/static43.json --out $R/triangle-piece16k.json > $R/triangle-piece16k.log 2>&1
echo "triangle, pieces of 16,384, rc $? at $(el) s: $(tail -1 $R/triangle-piece16k.log)" | tee -a $R/time.txt
B=bench/gpu_bench.py
for turn in 1 2; do
  for d in "" -DVIEW_NS=2000 -DVIEW_NS=4000 "-DVIEW_NS=2000 -DWAIT_NS_MAX=2048"; do
    [ $(el) -gt 540 ] && break 2
    tag=$(echo "${d:-default}" | tr -d '=-' | tr ' ' _)
    DCSM_KERNEL_DEFINES="$d" timeout -k 5 60 python3 -P $B --out $R/oracle-$tag-$turn --data .shdata --oracle-count-only --skip-latency > $R/oracle-$tag-$turn.log 2>&1
    echo "oracle '$d' turn $turn rc $? at $(el) s" | tee -a $R/time.txt
    DCSM_KERNEL_DEFINES="$d" timeout -k 5 100 python3 -P $B --out $R/latency-$tag-$turn --data .shdata --skip-search > $R/latency-$tag-$turn.log 2>&1
    echo "latency '$d' turn $turn rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency-$tag-$turn/gpu_bench.md | head -2 | cut -c1-120
  done
done
