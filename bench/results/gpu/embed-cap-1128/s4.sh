#!/usr/bin/env bash
# Session of 2026-11-28 19:20 (ninth), call 4: main's code. Embedding mode at batch caps
# 4,096 and 16,384 taking turns (call 3's benchmark had the oracle embedding rows slower
# than the last committed run: Q_9 insertion10 2.03 against 1.39 s), then kill -9 chaos
# with the GPU backend. Carry: .devrun .whl .shdata/oracle-github
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/s4.sh $R/
export PYTHONPATH=/tmp/a:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
echo "code: $(cat .devrun/head)" | tee $R/time.txt
echo "setup at $(el) s" | tee -a $R/time.txt
for s in insertion10 deletion10; do
  timeout -k 5 70 python3 -P bench/debug/embed_profile.py --query Q_9 --stream $s --batch-cap 4096 16384 --rounds 2 > $R/embed-q9-$s.log 2>&1
  echo "embed Q_9 $s rc $? at $(el) s" | tee -a $R/time.txt; grep "batch_cap" $R/embed-q9-$s.log
done
timeout -k 5 $(( 370 - $(el) )) python3 -P bench/chaos.py --kills 8 --updates 20000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; tail -15 $R/chaos-gpu.log
