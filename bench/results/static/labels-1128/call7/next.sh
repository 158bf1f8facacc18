#!/usr/bin/env bash
# For the next session (written 2026-11-28 08:20 UTC): verify branches snapshot-warm (.base-warm)
# and gpu-cycle-cut (.base-cut), archives without bench/results. Carry: .devrun .whl-svc
# .base-warm .base-cut. About 400 s. Then merge what passed and run the GPU suite on main in
# two calls (scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py; then the rest with
# --ignore=tests/gpu/test_engine_gpu.py).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
inst() { python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $2 $1 >/dev/null 2>&1 || { echo "install $1 failed"; exit 1; }; }
rm -rf /tmp/warm /tmp/cut; inst .base-warm /tmp/warm; inst .base-cut /tmp/cut
cp .devrun/next.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
# 1. snapshot-warm: the first service process on a fresh machine (no CuPy cache yet)
ls ~/.cupy/kernel_cache > /dev/null 2>&1 && echo "cupy cache exists: not a fresh machine" | tee -a $R/time.txt
PYTHONPATH=/tmp/warm:/tmp/site timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 --out /tmp/g43l.npz > $R/gen.log 2>&1
BF="--backend gpu --graph /tmp/g43l.npz --updates 12000 --rate 2000 --backfill-at 2"
(cd .base-warm && PYTHONPATH=/tmp/warm:/tmp/site timeout -k 5 110 python3 -P bench/backfill_beside.py $BF --pattern lpath6 --out $R/warm-first > $R/warm-first.log 2>&1)
echo "warm first process rc $? at $(el) s" | tee -a $R/time.txt
(cd .base-warm && PYTHONPATH=/tmp/warm:/tmp/site timeout -k 5 200 python3 -P -m pytest tests/gpu/test_gpu_static.py -x -q -p no:cacheprovider --confcutdir=tests/gpu -k "beside or snapshot or labelled" > $R/warm-tests.log 2>&1)
echo "warm tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/warm-tests.log
# 2. gpu-cycle-cut: its tests, then lcycle6 written from each vertex at 43M (timings, counts)
(cd .base-cut && PYTHONPATH=/tmp/cut:/tmp/site timeout -k 5 150 python3 -P -m pytest tests/gpu/test_gpu_static.py -x -q -p no:cacheprovider --confcutdir=tests/gpu -k "labelled" > $R/cut-tests.log 2>&1)
echo "cut tests rc $? at $(el) s" | tee -a $R/time.txt; tail -2 $R/cut-tests.log
# 3. lcycle6 written from each vertex both ways at 43M: the branch, then main (cut at vertex 0 side)
inst .base-main /tmp/main
for b in cut main; do
  [ $(el) -gt 470 ] && { echo "skip cycle bench $b at $(el) s" | tee -a $R/time.txt; continue; }
  (cd .base-cut && PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 $(( 575 - $(el) )) python3 -P bench/debug/cycle_cut_bench.py --backend gpu --edges 43000000 --labels 8 --out $R/cycles-43m-$b.json > $R/cycles-43m-$b.log 2>&1)
  echo "cycle bench $b rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/cycles-43m-$b.log
done
