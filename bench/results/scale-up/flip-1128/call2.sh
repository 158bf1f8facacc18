#!/usr/bin/env bash
# Session of 2026-11-28 11:52 (sixth), call 2: branch flip-ends (count-mode plans that
# stand for their reversed start edge run each update on the orientation whose level 2
# scans the shorter list). 1) gpu_bench in full with RapidFlow on the same host (new);
# 2) oracle count rows of main (.base-main, 91c4a64) for the same call; 3) the 10M 4-cycle
# row, new and main alternating; 4) the 43M 4-cycle row (new; main if time is left).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
inst() { python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $2 $1 >/dev/null 2>&1 || { echo "install $1 failed"; exit 1; }; }
rm -rf /tmp/new /tmp/main; inst . /tmp/new; inst .base-main /tmp/main
chmod +x .peers/bin/RapidFlow.out; export LD_LIBRARY_PATH=$PWD/.peers/bin:${LD_LIBRARY_PATH:-}
cp .devrun/call2.sh $R/; mkdir -p $R/bench
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/new:/tmp/site timeout -k 5 200 python3 -P bench/gpu_bench.py --out $R/bench --data .shdata \
    --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/bench.log 2>&1
echo "bench rc $? at $(el) s" | tee -a $R/time.txt; grep -A8 "### Totals" $R/bench/gpu_bench.md | tail -6
PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 60 python3 -P .base-main/bench/gpu_bench.py --out $R/oracle-main --data .shdata --oracle-count-only --skip-latency > $R/oracle-main.log 2>&1
echo "oracle main rc $? at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/new:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-new --data .shdata --oracle-count-only --skip-latency > $R/oracle-new.log 2>&1
echo "oracle new rc $? at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/new:/tmp/site timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g10.npz', chunglu_graph(10000000, 1111111, gamma=2.3, seed=0))"
echo "graph 10 at $(el) s" | tee -a $R/time.txt
for i in 1 2; do for b in new main; do
  [ $(el) -gt 330 ] && break
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g10.npz \
      --patterns 4cycle --out $R/c4-10m-$b-$i.json > $R/c4-10m-$b-$i.log 2>&1
  echo "10M 4cycle $b $i rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/c4-10m-$b-$i.log
done; done
rm -f /tmp/g10.npz
[ $(el) -lt 380 ] && PYTHONPATH=/tmp/new:/tmp/site timeout 80 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
for b in new main; do
  [ $(el) -gt 470 ] && break
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 $(( 570 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns 4cycle --out $R/c4-43m-$b.json > $R/c4-43m-$b.log 2>&1
  echo "43M 4cycle $b rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/c4-43m-$b.log
done
