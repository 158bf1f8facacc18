#!/usr/bin/env bash
# Session 18 call 2, main with start-overlap merged (the engine built beside the input lease):
#  1. chaos on the GPU backend, 6 kills as session 17's call 5 (a restart took 24.8 s there,
#     before the lease fix of 1cd710b and this overlap), with the lease's and the engine's shares;
#  2. issue 17's 43M rows on the final code: triangle three turns, 4-cycle once.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh .devrun/; the kernel cache as
#   .devrun/cupy-cache.tgz.aa. Carry: .devrun .whl
source .devrun/common-nowhl.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s18c2.sh $R/; nvidia-smi -L > $R/device.txt; git log -1 --format=%H > $R/head.txt 2>/dev/null
export PYTHONPATH=/tmp/m:/tmp/site
timeout -k 5 240 python3 -P bench/chaos.py --kills 6 --updates 15000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/chaos-gpu.log | tee -a $R/time.txt
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph ready at $(el) s" | tee -a $R/time.txt
for run in "triangle 1" "4cycle 1" "triangle 2" "triangle 3"; do
  set -- $run; [ $(el) -gt 520 ] && continue
  timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2.json > $R/$1-$2.log 2>&1
  echo "$1 $2 rc $? at $(el) s: $(tail -1 $R/$1-$2.log)" | tee -a $R/time.txt
done
