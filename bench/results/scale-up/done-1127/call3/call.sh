#!/usr/bin/env bash
# Session 8, call 3: gc-interleave (working tree) vs main (done-sparse, .base-main): 43M triangle profiles, GC_PASS_ROUNDS=1, oracle count, scale-up row, GPU suite.
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
for b in new base; do
  d=$PWD; [ $b = base ] && d=$PWD/.base-main
  s=/tmp/site-$b; rm -rf $s; mkdir -p $s
  (cd $d && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1)
  python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1
done
export PYTHONUNBUFFERED=1 DCSM_SHARED_DATA=$PWD/.shdata
R=$OUT/r; mkdir -p $R/gpu
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
PYTHONPATH=/tmp/site-new python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $R/gen.log 2>&1 &
GEN=$!
for b in base new base new; do
  o=$R/oc-$b-$(el)
  PYTHONPATH=/tmp/site-$b timeout -s KILL 60 python3 -P bench/gpu_bench.py --out $o --data .shdata --oracle-count-only --skip-latency > $o.log 2>&1
  echo "oracle count $b rc=$? $(el)s" >> $R/run.txt
done
wait $GEN; echo "gen rc=$? $(el)s" >> $R/run.txt
prof() {  # name site args...
  n=$1; b=$2; shift 2
  PYTHONPATH=/tmp/site-$b timeout -s KILL 100 python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz "$@" --out $R/prof-$n.json > $R/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(grep -m1 updates_per_s $R/prof-$n.json) $(grep -m1 step_input_slots_s $R/prof-$n.json)" >> $R/run.txt
}
prof new-a new --engine batch_cap=16384
prof base-a base --engine batch_cap=16384
prof new-b new --engine batch_cap=16384
prof base-b base --engine batch_cap=16384
DCSM_KERNEL_DEFINES="-DGC_PASS_ROUNDS=1" prof new-r1 new --engine batch_cap=16384
PYTHONPATH=/tmp/site-new timeout -s KILL 120 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --churn 1 --engine batch_cap=16384 --out $R/t43-new.json > $R/t43-new.log 2>&1
echo "t43 new rc=$? $(el)s" >> $R/run.txt
l=$(( 545 - $(el) ))
PYTHONPATH=/tmp/site-new DCSM_RESULTS=$R/gpu timeout -s KILL $l bash scripts/gpu-suite.sh --tests > /dev/null 2>&1
echo "suite rc=$? $(el)s $(tail -1 $R/gpu/gpu-tests.log)" >> $R/run.txt
grep -B3 -A30 "^E \|FAILED" $R/gpu/gpu-tests.log | head -60 >> $R/run.txt
rm -f $R/*/gc_pool_usage.tsv
cd $OUT && tar czf r.tgz r && rm -rf r
