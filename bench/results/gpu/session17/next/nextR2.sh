#!/usr/bin/env bash
# Written in the seventeenth session for the next one, on the final code of session 17:
#  1. the 43M rows (triangle three turns, 4-cycle once) for issue 17's before/after table;
#  2. chaos on the GPU backend, 3 kills, with the input lease's share of each start (c49aacf:
#     "held after X s" in the service log; session 17: a GPU restart took 24.8 s, the engine
#     4.45 s of it; on the CPU backend the lease took 16.65 of 18.07 s).
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh bench/results/gpu/session17/next/nextR2.sh .devrun/
#   and the kernel cache of session 17's last call as .devrun/cupy-cache.tgz.aa.
# Carry: .devrun .whl   (tracked tree ~26 MB + .whl 23 MB + cache: under the 64 MiB limit)
source .devrun/common-nowhl.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/nextR2.sh $R/; nvidia-smi -L > $R/device.txt; git log -1 --format=%H > $R/head.txt 2>/dev/null
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph ready at $(el) s" | tee -a $R/time.txt
for run in "triangle 1" "triangle 2" "4cycle 1" "triangle 3"; do
  set -- $run; [ $(el) -gt 300 ] && continue
  timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
done
left=$(( 570 - $(el) ))
[ $left -gt 150 ] && { timeout -k 5 $left python3 -P bench/chaos.py --kills 3 --updates 8000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
  echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/chaos-gpu.log | tee -a $R/time.txt; }
