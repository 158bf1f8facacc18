#!/usr/bin/env bash
# 2026-11-28 seventh session, the last call. The working tree is branch rank-claims (the
# label counter's claims in units and tiled scan, on main 37f297b = .base-prev). 1) the GPU
# suite's second part (tests/gpu but the engine tests) on it; if that fails, on .base-prev
# instead; 2) the engine tests on whichever passed; 3) label_count_ab --phases at 43M, 8
# labels, this tree then .base-prev on one graph. Carry: .devrun .whl-gpu .shdata .base-prev.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/a /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b .base-prev >/dev/null 2>&1 || exit 1
cp .devrun/fin.sh $R/
ROOT=$PWD
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$ROOT/.shdata DCSM_RESULTS=$R/rest-tests bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1
rc=$?
echo "rest tests (rank-claims) rc $rc at $(el) s" | tee -a $R/time.txt; tail -1 $R/rest-tests/gpu-tests.log
B=/tmp/a; SRC=$ROOT
if [ $rc != 0 ]; then
  B=/tmp/b; SRC=$ROOT/.base-prev
  mv $R/rest-tests $R/rest-tests-failed
  (cd $SRC && PYTHONPATH=/tmp/b:/tmp/site DCSM_SHARED_DATA=$ROOT/.shdata DCSM_RESULTS=$R/rest-tests bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/rest.log 2>&1)
  echo "rest tests (.base-prev) rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/rest-tests/gpu-tests.log
fi
(cd $SRC && PYTHONPATH=$B:/tmp/site DCSM_SHARED_DATA=$ROOT/.shdata DCSM_RESULTS=$R/engine-tests timeout -k 5 $(( 590 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/engine.log 2>&1)
echo "engine tests ($SRC) rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/engine-tests/gpu-tests.log
[ $(el) -gt 530 ] && exit 0
PYTHONPATH=/tmp/a:/tmp/site timeout -k 5 $(( 575 - $(el) )) python3 -P bench/debug/label_count_ab.py --edges 43000000 --labels 8 --variants 512:16 \
    --patterns lcycle6,lcycle5,lcycle4 --repeat 3 --phases --write-graph /tmp/g43l.npz --out $R/ab-claims.json > $R/ab-claims.log 2>&1
echo "ab claims rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/ab-claims.log
PYTHONPATH=/tmp/b:/tmp/site timeout -k 5 $(( 595 - $(el) )) python3 -P .base-prev/bench/debug/label_count_ab.py --graph /tmp/g43l.npz --variants 512:16 \
    --patterns lcycle6,lcycle5,lcycle4 --repeat 3 --phases --out $R/ab-prev.json > $R/ab-prev.log 2>&1
echo "ab prev rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/ab-prev.log
