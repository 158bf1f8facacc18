#!/usr/bin/env bash
# Session of 2026-11-28 09:21 (fifth), call 4: branch cycle-rows (each cycle step walks its
# own filtered rows) verified: its labelled GPU tests, then the label counter's cycles at
# 43M edges (8 labels) for the branch and main alternately on one saved graph; then, time
# permitting, the 43M triangle insertion row of issue 17 on main.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
inst() { python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $2 $1 >/dev/null 2>&1 || { echo "install $1 failed"; exit 1; }; }
rm -rf /tmp/main /tmp/rows; inst . /tmp/main; inst .base-rows /tmp/rows
cp .devrun/c4.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/main:/tmp/site timeout 60 python3 -P -m dcsm.cli gen-graph --model chung-lu --edges 43000000 --labels 8 --out /tmp/g43l.npz > $R/gen.log 2>&1
echo "gen rc $? at $(el) s" | tee -a $R/time.txt
(cd .base-rows && PYTHONPATH=/tmp/rows:/tmp/site timeout -k 5 120 python3 -P -m pytest tests/gpu/test_gpu_static.py -x -q -p no:cacheprovider --confcutdir=tests/gpu -k "labelled or beside or snapshot" > $R/rows-tests.log 2>&1)
echo "rows tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/rows-tests.log
for i in 1 2; do for b in rows main; do
  [ $(el) -gt 330 ] && break
  PYTHONPATH=/tmp/$b:/tmp/site timeout -k 5 60 python3 -P bench/debug/label_count_ab.py --graph /tmp/g43l.npz \
      --variants 512:16 --patterns lcycle6,lcycle5,lcycle4 --repeat 2 --out $R/ab-$b-$i.json > $R/ab-$b-$i.log 2>&1
  echo "ab $b $i rc $? at $(el) s" | tee -a $R/time.txt; grep lcycle6 $R/ab-$b-$i.log
done; done
if [ $(el) -lt 300 ]; then
  rm -f /tmp/g43l.npz
  PYTHONPATH=/tmp/main:/tmp/site timeout 70 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
  echo "graph 43 at $(el) s" | tee -a $R/time.txt
  PYTHONPATH=/tmp/main:/tmp/site timeout -k 5 $(( 440 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns triangle --churn 1 --engine batch_cap=16384 --out $R/triangle-43m.json > $R/triangle-43m.log 2>&1
  echo "triangle rc $? at $(el) s" | tee -a $R/time.txt; tail -3 $R/triangle-43m.log
fi
