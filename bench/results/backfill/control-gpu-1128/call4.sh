#!/usr/bin/env bash
# Call 4 of the third session of 2026-11-28: the registers the device's NVRTC gives the static
# count kernels (uncapped, and at COUNT_MIN_BLOCKS 8) and the persistent kernel; the static GPU
# tests of the matcher beside the kernel with the cap at 8; the beside backfill at 8, twice.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
NEW=/tmp/new:/tmp/site
cp .devrun/call4.sh $R/
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$NEW timeout -k 5 150 python3 -P - > $R/regs.txt 2>&1 <<'PY'
from dcsm.gpu.static_match import StaticMatcher
from dcsm.gpu.engine import GpuEngine
for cap in (0, 8):
    m = StaticMatcher(count_min_blocks=cap)
    print("static, count_min_blocks", cap, {n: int(f.num_regs) for n, f in m._kernels.items()}, flush=True)
e = GpuEngine(static_beside=True)
print("persistent", int(e._kernel.num_regs), "regs; blocks", e._blocks, flush=True)
e.close()
PY
echo "regs rc $? at $(el) s" | tee -a $R/time.txt; cat $R/regs.txt
PYTHONPATH=$NEW timeout -k 5 150 python3 -P -m pytest tests/gpu/test_gpu_static.py -q -p no:cacheprovider --confcutdir=tests/gpu \
    -k "event_waits or static_beside or snapshot" > $R/tests.log 2>&1
echo "tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/tests.log
BF="--backend gpu --edges 200000 --updates 16000 --rate 2000 --backfill-at 2"
for i in 1 2; do
    [ $(el) -lt 300 ] || break
    PYTHONPATH=$NEW timeout -k 5 100 python3 -P bench/backfill_beside.py $BF --out $R/bf-mb8-$i > $R/bf-mb8-$i.log 2>&1
    echo "bf $i rc $? at $(el) s" | tee -a $R/time.txt
done
