#!/usr/bin/env bash
# Call 3, 2026-11-28 fourth session: the whole GPU suite on main's code (label counter with its
# 512-thread, 16 GiB defaults; static_snapshot relaunches the kernel before a backfill starts).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || { echo "install failed"; exit 1; }
cp .devrun/lc3.sh $R/
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/new:/tmp/site DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/gpu bash scripts/gpu-suite.sh --tests > $R/suite.log 2>&1
echo "suite rc $? at $(el) s" | tee -a $R/time.txt
tail -25 $R/gpu/gpu-tests.log
