#!/usr/bin/env bash
# Session 9, call 6: light rows (oracle count) against the host piece size and the batch cap.
# carry: .whl-min .shdata .devrun
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
s=/tmp/site-main; rm -rf $s; mkdir -p $s
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $s . >/dev/null 2>&1
python3 -m pip install -q --no-deps --no-index --target $s .whl-min/*.whl > /dev/null 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$s
nvidia-smi --query-gpu=name --format=csv,noheader > $R/run.txt
oc() { n=$1; shift
  timeout -s KILL 90 env "$@" python3 -P .devrun/patch_run.py bench/gpu_bench.py --out $R/oc-$n --data .shdata --oracle-count-only --skip-latency $ENG > $R/oc-$n.log 2>&1
  echo "oc $n rc=$? $(el)s $(python3 -c "
import json; rows=json.load(open('$R/oc-$n/gpu_bench.json'))['search']
rs=[r for r in rows if r['query']!='all at once' and r['stream']!='all at once']
print(round(sum(r['seconds'] for r in rs),4), all(r['matches']==r['peer_matches'] for r in rs), [round(r['seconds']*1000,1) for r in rs])" 2>&1 | tail -1)" >> $R/run.txt; }
ENG= oc w X=1
ENG= oc base-a X=1
ENG="--engine batch_cap=16384" oc cap16-a X=1
ENG= oc p16-a PATCH=dcsm.gpu.engine:_PIECE=16384
ENG="--engine batch_cap=16384" oc p16cap16-a PATCH=dcsm.gpu.engine:_PIECE=16384
ENG= oc p1k-a PATCH=dcsm.gpu.engine:_PIECE=1024
ENG= oc base-b X=1
ENG="--engine batch_cap=16384" oc cap16-b X=1
ENG= oc p16-b PATCH=dcsm.gpu.engine:_PIECE=16384
ENG="--engine batch_cap=16384" oc p16cap16-b PATCH=dcsm.gpu.engine:_PIECE=16384
ENG= oc p1k-b PATCH=dcsm.gpu.engine:_PIECE=1024
cd $OUT && tar czf r.tgz r && rm -rf r
