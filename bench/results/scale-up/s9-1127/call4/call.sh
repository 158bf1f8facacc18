#!/usr/bin/env bash
# Session 9, call 4: branch pool-compact (working tree, warm-up compiles the compaction) against main (.base-main, its own scripts): 43M triangle profiles with pool sizes, headroom 1.5, the scale-up row's memory.
# carry: .base-main .whl-min .devrun
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
inst new $PWD
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
wait $GEN; echo "gen rc=$? $(el)s" >> $R/run.txt
prof() { n=$1; b=$2; shift 2
  [ $(el) -gt 430 ] && { echo "skip $n $(el)s" >> $R/run.txt; return; }
  dir=$PWD; [ $b = main ] && dir=$PWD/.base-main
  (cd $dir && PYTHONPATH=/tmp/site-$b timeout -s KILL 70 env "$@" python3 -P $OLDPWD/.devrun/pool_run.py bench/debug/insert_profile.py --graph /tmp/g43.npz --out $R/prof-$n.json --engine batch_cap=16384 > $R/prof-$n.log 2>&1)
  echo "prof $n rc=$? $(el)s $(python3 -c "import json;d=json.load(open('$R/prof-$n.json'));print(d['updates_per_s'],d['pool'])" 2>&1 | tail -1)" >> $R/run.txt; }
prof main-w main X=1
prof new-w new X=1
prof new-a new X=1
prof main-a main X=1
prof new-h15-a new POOL_HEADROOM=1.5
PYTHONPATH=/tmp/site-new timeout -s KILL 120 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --churn 1 --engine batch_cap=16384 --out $R/t43-new.json > $R/t43-new.log 2>&1
echo "t43 new rc=$? $(el)s" >> $R/run.txt
prof new-b new X=1
prof main-b main X=1
prof new-h15-b new POOL_HEADROOM=1.5
cd $OUT && tar czf r.tgz r && rm -rf r
