#!/usr/bin/env bash
# Session 11, call 3: main with short-tails merged. The GPU benchmark with RapidFlow beside
# every row, the 43M triangle in 1M-update applies taking turns between main and main plus
# pump-between-pieces (the host reads completions between pieces once half the
# update slots wait on it), then the service on the GPU (binary rates, latency).
# Carry: .devrun .whl .shdata .peers/bin/RapidFlow-native.out (pump: this tree with
# .devrun/pump-engine.py as gpu/engine.py, made here)
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/main /tmp/pump
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
rm -rf /tmp/pumpsrc; mkdir /tmp/pumpsrc; tar cf - --exclude=./.whl --exclude=./.shdata --exclude=./.peers --exclude=./bench/results . | tar xf - -C /tmp/pumpsrc
cp .devrun/pump-engine.py /tmp/pumpsrc/gpu/engine.py; diff gpu/engine.py /tmp/pumpsrc/gpu/engine.py > $R/pump.diff
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/pump /tmp/pumpsrc >/dev/null 2>&1 || exit 1
cp .devrun/d3.sh $R/; nvidia-smi -L > $R/device.txt
echo "code: $(cat .devrun/head)" | tee $R/time.txt
PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 240 python3 -P bench/gpu_bench.py --out $R/bench --data .shdata \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/bench.log 2>&1
echo "bench rc $? at $(el) s" | tee -a $R/time.txt; grep -A8 "### Totals" $R/bench/gpu_bench.md | tail -6
PYTHONPATH=/tmp/main:/tmp/site timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
for i in 1 2; do for b in main pump; do
  [ $(el) -gt 360 ] && break
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 --batch-size 1048576 --out $R/tri-$b-$i.json > $R/tri-$b-$i.log 2>&1
  echo "triangle $b $i rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tri-$b-$i.log
done; done
rm -f /tmp/g43.npz
S="bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy"
A="--drain-s 8 --vertices 200000"
[ $(el) -lt 430 ] && { $S --duration 3 --timeout 100 --tag binary 100000,500000,750000,1000000 -- $A > $R/svc-binary.log 2>&1; echo "svc binary rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc/binary/loadgen.log | cut -d' ' -f2-; }
[ $(el) -lt 520 ] && { $S --duration 5 --timeout 60 --tag latency 10000,100000 -- $A > $R/svc-latency.log 2>&1; echo "svc latency rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc/latency/loadgen.log | cut -d' ' -f2-; }
