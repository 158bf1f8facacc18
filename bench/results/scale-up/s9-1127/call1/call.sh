#!/usr/bin/env bash
# Next session, call 1: branches gc-fast, read-bound and read-job against main on the 43M triangle (profiles with pool sizes), then the suite on whichever is merged next.
# Prepare: for b in main gc-fast read-bound read-job; do rm -rf .base-$b && mkdir .base-$b && git archive $b | tar -x -C .base-$b --exclude='bench/results'; done
# carry: .base-main .base-gc-fast .base-read-bound .base-read-job .whl-min .shdata .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
inst() { s=/tmp/site-$1; rm -rf $s; mkdir -p $s
  (cd $2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1)
  python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1; }
inst main $PWD/.base-main
PYTHONPATH=/tmp/site-main python3 -P -c "
from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph
write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" > $OUT/gen.log 2>&1 &
GEN=$!
inst gc-fast $PWD/.base-gc-fast; inst read-bound $PWD/.base-read-bound; inst read-job $PWD/.base-read-job
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/run.txt
wait $GEN; echo "gen rc=$? $(el)s" >> $OUT/run.txt
for n in main-w gc-fast-a main-a read-bound-a read-job-a gc-fast-b main-b read-bound-b read-job-b; do
  b=${n%-*}
  PYTHONPATH=/tmp/site-$b timeout -s KILL 100 python3 -P bench/debug/insert_profile.py --graph /tmp/g43.npz --engine batch_cap=16384 --out $OUT/prof-$n.json > $OUT/prof-$n.log 2>&1
  echo "prof $n rc=$? $(el)s $(grep -m1 updates_per_s $OUT/prof-$n.json) $(grep -m1 pool_slabs_after $OUT/prof-$n.json) $(grep -m1 gc_queue_mean $OUT/prof-$n.json)" >> $OUT/run.txt
done
# main's finalize_update barrier (e963499) has not run on a device: its suite first.
l=$(( 560 - $(el) ))
PYTHONPATH=/tmp/site-main DCSM_RESULTS=$OUT/gpu timeout -s KILL $l bash scripts/gpu-suite.sh --tests > /dev/null 2>&1
echo "suite main rc=$? $(el)s $(tail -1 $OUT/gpu/gpu-tests.log)" >> $OUT/run.txt
rm -f $OUT/*/gc_pool_usage.tsv
