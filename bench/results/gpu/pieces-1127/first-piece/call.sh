#!/usr/bin/env bash
# Session 9, call 7: branch first-piece (working tree) against main (.base-main): oracle count light rows, alternating, then the GPU suite on the branch.
# carry: .base-main .whl-min .shdata .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
inst() { s=/tmp/site-$1; rm -rf $s; mkdir -p $s
  (cd $2 && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1)
  python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1; }
R=$OUT/r; mkdir -p $R
inst main $PWD/.base-main; inst new $PWD
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
oc() { n=$1; b=$2
  PYTHONPATH=/tmp/site-$b timeout -s KILL 90 python3 -P bench/gpu_bench.py --out $R/oc-$n --data .shdata --oracle-count-only --skip-latency > $R/oc-$n.log 2>&1
  echo "oc $n rc=$? $(el)s $(python3 -c "
import json; rows=json.load(open('$R/oc-$n/gpu_bench.json'))['search']
rs=[r for r in rows if r['query']!='all at once' and r['stream']!='all at once']
print(round(sum(r['seconds'] for r in rs),4), all(r['matches']==r['peer_matches'] for r in rs), [round(r['seconds']*1000,1) for r in rs])" 2>&1 | tail -1)" >> $R/run.txt; }
oc main-w main; oc new-w new
for k in a b c; do oc main-$k main; oc new-$k new; done
PYTHONPATH=/tmp/site-new DCSM_SHARED_DATA=$PWD/.shdata DCSM_RESULTS=$R/gpu timeout -s KILL 330 bash scripts/gpu-suite.sh --tests > $R/suite.log 2>&1
echo "suite new rc=$? $(el)s $(tail -1 $R/gpu/gpu-tests.log)" >> $R/run.txt
cd $OUT && tar czf r.tgz r && rm -rf r
