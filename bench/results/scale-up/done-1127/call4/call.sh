#!/usr/bin/env bash
# Session 8, call 4 (short: ~240 s of budget left): alloc-waits (working tree) vs main (.base-main): 43M triangle profiles with pool sizes. No suite.
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
inst() {  # site dir
  s=/tmp/site-$1; rm -rf $s; mkdir -p $s
  (cd $2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1)
  python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1
}
inst new $PWD
PYTHONPATH=/tmp/site-new python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $OUT/gen.log 2>&1 &
GEN=$!
inst base $PWD/.base-main
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/run.txt
echo "installed $(el)s" >> $OUT/run.txt
wait $GEN; echo "gen rc=$? $(el)s" >> $OUT/run.txt
for n in new-a base-a new-b; do
  b=${n%-*}
  PYTHONPATH=/tmp/site-$b timeout -s KILL 40 python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz --engine batch_cap=16384 --out $OUT/prof-$n.json > $OUT/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(grep -m1 updates_per_s $OUT/prof-$n.json) $(grep -m1 pool_slabs_after $OUT/prof-$n.json)" >> $OUT/run.txt
done
