#!/usr/bin/env bash
# Session 9, call 5: main (pool compaction opt-in merged): the whole GPU suite with the reference data, then the 43M triangle at batch caps 16,384 and 32,768.
# carry: .whl-min .shdata .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
s=/tmp/site-main; rm -rf $s; mkdir -p $s
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1
python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$s DCSM_SHARED_DATA=$PWD/.shdata
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $R/gen.log 2>&1 &
GEN=$!
DCSM_RESULTS=$R/gpu timeout -s KILL 330 bash scripts/gpu-suite.sh --tests > $R/suite.log 2>&1
echo "suite rc=$? $(el)s $(tail -1 $R/gpu/gpu-tests.log)" >> $R/run.txt
wait $GEN; echo "gen rc=$? $(el)s" >> $R/run.txt
for n in 16384-a 32768-a 16384-b 32768-b; do cap=${n%-*}
  [ $(el) -gt 520 ] && { echo "skip $n" >> $R/run.txt; continue; }
  timeout -s KILL 60 python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz --engine batch_cap=$cap --out $R/prof-$n.json > $R/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(python3 -c "import json;d=json.load(open('$R/prof-$n.json'));print(d['updates_per_s'],d['pool'])" 2>&1 | tail -1)" >> $R/run.txt
done
rm -f $R/gpu/gc_pool_usage.tsv
cd $OUT && tar czf r.tgz r && rm -rf r
