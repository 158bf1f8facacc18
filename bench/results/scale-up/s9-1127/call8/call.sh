#!/usr/bin/env bash
# Session 9, call 8: main, 43M triangle insertion with fewer update slots (maxu 32,768: at most two batches of 16,384 in flight) against the default (65,536): rate and pool; the scale-up row's memory with it.
# carry: .whl-min .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
s=/tmp/site-main; rm -rf $s; mkdir -p $s
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1
python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$s
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $R/gen.log 2>&1
echo "gen rc=$? $(el)s" >> $R/run.txt
prof() { n=$1; shift
  timeout -s KILL 80 python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz --engine "$@" --out $R/prof-$n.json > $R/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(python3 -c "import json;d=json.load(open('$R/prof-$n.json'));print(d['updates_per_s'],d['pool'],d['updater']['step_input_slots_s'])" 2>&1 | tail -1)" >> $R/run.txt; }
prof w batch_cap=16384
prof m32-a batch_cap=16384 maxu=32768
prof base-a batch_cap=16384
prof m32-b batch_cap=16384 maxu=32768
prof base-b batch_cap=16384
[ $(el) -lt 240 ] && { timeout -s KILL 90 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --churn 1 --engine batch_cap=16384 --engine maxu=32768 --out $R/t43-m32.json > $R/t43-m32.log 2>&1; echo "t43 m32 rc=$? $(el)s" >> $R/run.txt; }
cd $OUT && tar czf r.tgz r && rm -rf r
