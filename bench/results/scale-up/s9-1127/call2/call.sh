#!/usr/bin/env bash
# Session 9, call 2: read-job against main (oracle count, 43M triangle profiles), read-job with larger rings and batch cap, and the pool policy's constants.
# carry: .base-main .base-read-job .whl-min .shdata .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
inst() { s=/tmp/site-$1; rm -rf $s; mkdir -p $s
  (cd $2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1)
  python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1; }
R=$OUT/r; mkdir -p $R
inst main $PWD/.base-main
PYTHONPATH=/tmp/site-main python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $R/gen.log 2>&1 &
GEN=$!
inst read-job $PWD/.base-read-job
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
for n in main-w read-job-a main-a read-job-b main-b; do b=${n%-*}
  (cd .base-$b && PYTHONPATH=/tmp/site-$b timeout -s KILL 120 python3 -P bench/gpu_bench.py --out $R/oc-$n --data ../.shdata --oracle-count-only --skip-latency > $R/oc-$n.log 2>&1)
  echo "oc $n rc=$? $(el)s" >> $R/run.txt
done
wait $GEN; echo "gen rc=$? $(el)s (beside the oracle counts)" >> $R/run.txt
prof() { n=$1; b=$2; shift 2
  PYTHONPATH=/tmp/site-$b timeout -s KILL 100 env "$@" python3 -P .devrun/pool_run.py --graph /tmp/g43.npz --out $R/prof-$n.json --engine $ENG > $R/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(grep -m1 updates_per_s $R/prof-$n.json) $(grep -m1 pool_slabs_after $R/prof-$n.json) $(grep -m1 slabs_in_use $R/prof-$n.json)" >> $R/run.txt; }
E=batch_cap=16384; M2="batch_cap=16384 maxu=131072 in_cap=131072"; C32="batch_cap=32768 maxu=131072 in_cap=131072"
ENG=$E prof main-w main X=1
ENG=$E prof rj-a read-job X=1
ENG=$E prof main-a main X=1
ENG="$M2" prof rj-m2-a read-job X=1
ENG="$C32" prof rj-c32-a read-job X=1
ENG=$E prof main-g11-a main POOL_GROWTH=1.1
ENG=$E prof main-h14-a main POOL_HEADROOM=1.4 POOL_GROWTH=1.1
ENG=$E prof rj-b read-job X=1
ENG=$E prof main-b main X=1
ENG="$M2" prof rj-m2-b read-job X=1
ENG="$C32" prof rj-c32-b read-job X=1
cd $OUT && tar czf r.tgz r && rm -rf r
