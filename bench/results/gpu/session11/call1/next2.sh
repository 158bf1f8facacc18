#!/usr/bin/env bash
# For the next session (written 2026-11-28, tenth session): branch short-tails (5300b81: the
# short path appends tails; compiled locally, never run). First its engine tests (the short
# path's first, -x), then, time allowing, the latency part and the oracle count rows taking
# turns with main. Archive first, from /work/main:
#   git archive --format=tar --prefix=.base-tails/ short-tails | tar x && rm -rf .base-tails/bench/results .base-tails/docs
# Carry: .devrun .whl-gpu .shdata/oracle-github .base-tails. Tests ~420 s on a cold machine:
# run the A/B (second loop) in its own call if the tests take the whole of this one.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/main /tmp/tails
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/main . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/tails .base-tails >/dev/null 2>&1 || exit 1
cp .devrun/next2.sh $R/
(cd .base-tails && PYTHONPATH=/tmp/tails:/tmp/site DCSM_SHARED_DATA=$OLDPWD/.shdata timeout -k 5 180 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q \
   -p no:cacheprovider --confcutdir=tests/gpu -k "short_path or tails or self_checks" > $R/tails-short-tests.log 2>&1)
echo "short-path tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tails-short-tests.log
(cd .base-tails && PYTHONPATH=/tmp/tails:/tmp/site DCSM_SHARED_DATA=$OLDPWD/.shdata timeout -k 5 $((560 - $(el))) python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q \
   -p no:cacheprovider --confcutdir=tests/gpu -k "not (short_path or tails or self_checks)" > $R/tails-other-tests.log 2>&1)
echo "other engine tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/tails-other-tests.log
for b in tails main tails main; do
  [ $(el) -gt 520 ] && break
  n=$(ls -d $R/latency-$b-* 2>/dev/null | wc -l); n=$((n + 1))
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency-$b-$n --data .shdata --skip-search > $R/latency-$b-$n.log 2>&1
  echo "latency $b $n rc $? at $(el) s" | tee -a $R/time.txt
done
