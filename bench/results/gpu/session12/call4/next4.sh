#!/usr/bin/env bash
# Session 12 call 4: 43M triangle, CLOSE_RECHECK 0 vs 1 taking turns (main 152694d).
# Carry: .devrun .whl-gpu
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
[ -d /tmp/site/cupy ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next4.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site
[ -f /tmp/g43.npz ] || timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph ready at $(el) s" | tee -a $R/time.txt
for v in 1 0 1 0 1 0; do
  [ $(el) -gt 330 ] && break
  n=$(ls $R/tri-cr$v-*.json 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES=-DCLOSE_RECHECK=$v timeout -k 5 $(( 400 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 --batch-size 1048576 --out $R/tri-cr$v-$n.json > $R/tri-cr$v-$n.log 2>&1
  echo "CLOSE_RECHECK=$v run $n rc $? at $(el) s: $(tail -1 $R/tri-cr$v-$n.log)" | tee -a $R/time.txt
done
