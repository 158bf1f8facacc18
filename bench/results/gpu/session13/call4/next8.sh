#!/usr/bin/env bash
# Thirteenth session, call 4: main with merge-last merged (MERGE_PREFETCH 1) and the paced
# writer's periodic pump (gpu/input_ring.py _PUMP_NS). The response rows with the sustained
# 1M/s row, the pump interval A/B, then the 43M 4-cycle and triangle on main's defaults.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next8.sh .devrun/pump_ab.py $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/a:/tmp/site
timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -4 | cut -c1-170
timeout -k 5 120 python3 -P .devrun/pump_ab.py > $R/pump-ab.log 2>&1
echo "pump A/B rc $? at $(el) s" | tee -a $R/time.txt; cat $R/pump-ab.log | grep turn
timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph ready at $(el) s" | tee -a $R/time.txt
for p in 4cycle triangle 4cycle triangle; do
  [ $(el) -gt 420 ] && break
  n=$(ls $R/$p-*.json 2>/dev/null | wc -l); n=$((n + 1))
  timeout -k 5 $(( 585 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $p \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$p-$n.json > $R/$p-$n.log 2>&1
  echo "$p run $n rc $? at $(el) s: $(tail -1 $R/$p-$n.log)" | tee -a $R/time.txt
done
cp /tmp/static43.json $R/ 2>/dev/null
