#!/usr/bin/env bash
# Session 18 call 5: chaos on the GPU backend, 3 kills, with each start's seconds, its
# engine's and its input lease's (chaos's each_start, b60ad16): do the two overlap?
# Carry: .devrun .whl (the kernel cache of call 2 as .devrun/cupy-cache.tgz.aa)
source .devrun/common-nowhl.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s18c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum service/*.py bench/chaos.py > $R/files.md5
export PYTHONPATH=/tmp/m:/tmp/site NO_CACHE_BACK=1
timeout -k 5 $(( 125 - $(el) )) python3 -P bench/chaos.py --kills 3 --updates 8000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/chaos-gpu.log | tee -a $R/time.txt
python3 -c "import json; print(json.load(open('$R/chaos-gpu/result.json'))['each_start'])" 2>&1 | tee -a $R/time.txt
