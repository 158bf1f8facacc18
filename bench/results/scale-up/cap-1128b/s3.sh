#!/usr/bin/env bash
# Session of 2026-11-28 19:20 (ninth), call 3: main's code (batch cap 16,384, vertex room a
# piece at a time, 16-bit 4-cycle hubs; its GPU suite passed in call 2 on the same GPU
# code): the GPU benchmark with RapidFlow beside every row (built here with -march=native,
# the ignored .peers/), the 43M triangle as one 4.3M-update apply and as 1M-update
# applies, then the service on the GPU (loadgen, binary rates and latency).
# Carry: .devrun .whl .shdata .peers/bin/RapidFlow-native.out
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/s3.sh $R/
echo "code: $(cat .devrun/head)" | tee $R/time.txt
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/a:/tmp/site timeout -k 5 240 python3 -P bench/gpu_bench.py --out $R/bench --data .shdata \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/bench.log 2>&1
echo "bench rc $? at $(el) s" | tee -a $R/time.txt; grep -A8 "### Totals" $R/bench/gpu_bench.md | tail -6
PYTHONPATH=/tmp/a:/tmp/site timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
for b in 4300000 1048576; do
  [ $(el) -gt 330 ] && break
  PYTHONPATH=/tmp/a:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 --batch-size $b --out $R/tri-b$b.json > $R/tri-b$b.log 2>&1
  echo "triangle applies of $b rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tri-b$b.log
done
rm -f /tmp/g43.npz
S="bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy"
A="--drain-s 8 --vertices 200000"
[ $(el) -lt 420 ] && { $S --duration 3 --timeout 120 --tag binary 100000,500000,750000,1000000 -- $A > $R/svc-binary.log 2>&1; echo "svc binary rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc/binary/loadgen.log | cut -d' ' -f2-; }
[ $(el) -lt 520 ] && { $S --duration 5 --timeout 70 --tag latency 10000,100000 -- $A > $R/svc-latency.log 2>&1; echo "svc latency rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc/latency/loadgen.log | cut -d' ' -f2-; }
