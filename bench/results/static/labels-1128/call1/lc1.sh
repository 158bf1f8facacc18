#!/usr/bin/env bash
# Call 1, 2026-11-28 fourth session: the GPU label counter (gpu/label_count.py): its GPU tests,
# then static_bench on Chung-Lu graphs with 8 vertex labels at 1M (with the device search
# and the CPU engine) and 43M edges (CPU engine on this host's cores).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
export PYTHONPATH=/tmp/new:/tmp/site
cp .devrun/lc1.sh $R/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/device.txt
nproc >> $R/device.txt
echo "setup at $(el) s" | tee -a $R/time.txt
timeout -k 5 220 python3 -m pytest -q -x -p no:cacheprovider tests/gpu/test_gpu_static.py -k "labelled or past_2 or beside or warm or csr" --junitxml=$R/tests.xml > $R/tests.log 2>&1
echo "tests rc $? at $(el) s" | tee -a $R/time.txt
tail -5 $R/tests.log
SH=lpath4,lpath6,lstar5,lcycle4,lcycle5,lcycle6
timeout -k 5 120 python3 -P bench/static_bench.py --sets "" --chunglu-edges 1000000 --chunglu-labels 8 --chunglu-shapes $SH --search --out $R/lc-1m.json > $R/lc-1m.log 2>&1
echo "1m rc $? at $(el) s" | tee -a $R/time.txt
tail -3 $R/lc-1m.log
left=$(( 560 - $(el) ))
[ $left -gt 120 ] && timeout -k 5 $left python3 -P bench/static_bench.py --sets "" --chunglu-edges 43000000 --chunglu-labels 8 --chunglu-shapes lpath6,lcycle6,lcycle4,lstar5 --repeat 2 --cpu-max-edges 50000000 --out $R/lc-43m.json > $R/lc-43m.log 2>&1
echo "43m rc $? at $(el) s" | tee -a $R/time.txt
tail -6 $R/lc-43m.log
