#!/usr/bin/env bash
# Session 9, call 3: branch pool-compact (working tree) against main (.base-main): the pool tests, 43M triangle profiles with pool sizes, the scale-up row's memory, main at batch cap 32,768.
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
PYTHONPATH=/tmp/site-new timeout -s KILL 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_engine_gpu.py -k "pool or compact or slots or relaunch" > $R/pool-tests.log 2>&1
echo "pool tests rc=$? $(el)s $(tail -1 $R/pool-tests.log)" >> $R/run.txt
wait $GEN; echo "gen rc=$? $(el)s" >> $R/run.txt
prof() { n=$1; b=$2; shift 2
  PYTHONPATH=/tmp/site-$b timeout -s KILL 100 env "$@" python3 -P .devrun/pool_run.py bench/debug/insert_profile.py --graph /tmp/g43.npz --out $R/prof-$n.json --engine $ENG > $R/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(python3 -c "import json;d=json.load(open('$R/prof-$n.json'));print(d['updates_per_s'],d['pool'])" 2>&1 | tail -1)" >> $R/run.txt; }
E=batch_cap=16384; C32="batch_cap=32768"
ENG=$E prof main-w main X=1
ENG=$E prof new-a new X=1
ENG=$E prof main-a main X=1
ENG=$E prof new-h15-a new POOL_HEADROOM=1.5
ENG=$C32 prof main-c32-a main X=1
ENG=$E prof new-b new X=1
ENG=$E prof main-b main X=1
ENG=$E prof new-h15-b new POOL_HEADROOM=1.5
ENG=$C32 prof main-c32-b main X=1
PYTHONPATH=/tmp/site-new timeout -s KILL 150 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --churn 1 --engine batch_cap=16384 --out $R/t43-new.json > $R/t43-new.log 2>&1
echo "t43 new rc=$? $(el)s" >> $R/run.txt
cd $OUT && tar czf r.tgz r && rm -rf r
