#!/usr/bin/env bash
# Session 2026-11-28b, call 3: the GPU suite on the new code; then the 4-cycle and triangle
# on a 10M-edge graph, main before the session (ddc15b2, base) and now (new: lookups in
# lockstep, Version in two loads), alternating while time is left.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new /tmp/base
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/base .base-main >/dev/null 2>&1 || exit 1
NEW=/tmp/new:/tmp/site; BASE=/tmp/base:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
PYTHONPATH=$NEW timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 10000000 --out /tmp/g10.npz > $R/gen.log 2>&1
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$NEW DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/gpu bash scripts/gpu-suite.sh --tests > /dev/null 2>&1
echo "suite rc $? at $(el) s" | tee -a $R/time.txt
tail -3 $R/gpu/gpu-tests.log
for b in new base new base; do
    left=$(( 585 - $(el) ))
    [ $left -gt 40 ] || break
    P=$NEW; S=.; [ $b = base ] && { P=$BASE; S=.base-main; }
    t=$(el)
    PYTHONPATH=$P timeout -k 5 $left python3 -P $S/bench/scale_up_bench.py --backend gpu --graph /tmp/g10.npz \
        --patterns 4cycle,triangle --out $R/g10-$b-$t.json > $R/g10-$b-$t.log 2>&1
    echo "g10 $b rc $? at $(el) s" | tee -a $R/time.txt
done
