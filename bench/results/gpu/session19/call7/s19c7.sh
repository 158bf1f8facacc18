#!/usr/bin/env bash
# Session 19 call 7: the static matcher's whole test file on the final code (the only code
# changed after call 4's suite is the label counter's tailed_pairs, whose ring tests passed
# in call 6; its module holds every label-counter kernel).
# Carry: .devrun .shdata/oracle-github .shdata/citeseer   (.devrun/cupy-cache.tgz.aa: call 6's cache)
source .devrun/common-nowhl.sh
NO_CACHE_BACK=1
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s19c7.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py > $R/tests.log 2>&1
echo "test_gpu_static rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
grep -E "FAILED|Error" $R/tests.log | head -10 | tee -a $R/time.txt
