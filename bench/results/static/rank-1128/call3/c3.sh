#!/usr/bin/env bash
# 2026-11-28 seventh session, call 3. 1) Branch hub-bits-flip (.base-hubflip): the 43M
# 4-cycle at hub_bits 1024 and 0 on one graph and stream (its tests run in the suite if it
# is merged). 2) Branch gpu-rank-cycles (.base-rank): the ranked label counter's kernels'
# device times and block sizes at 43M edges, 8 labels. Carry: .devrun .whl-gpu
# .base-hubflip .base-rank.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
for b in hubflip rank; do
  rm -rf /tmp/$b
  python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/$b .base-$b >/dev/null 2>&1 || exit 1
done
cp .devrun/c3.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/rank:/tmp/site timeout -k 5 120 python3 -P .base-rank/bench/debug/label_count_ab.py --edges 43000000 --labels 8 \
    --variants 512:16,256:16,128:16,1024:16 --patterns lcycle6,lcycle5,lcycle4 --repeat 3 --phases --out $R/ab-phases.json > $R/ab-phases.log 2>&1
echo "ab phases rc $? at $(el) s" | tee -a $R/time.txt; tail -12 $R/ab-phases.log
export PYTHONPATH=/tmp/hubflip:/tmp/site
timeout 80 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
timeout -k 5 $(( 400 - $(el) )) python3 -P .base-hubflip/bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns 4cycle \
    --gpu-hub-bits 1024,0 --out $R/c4-43m-hb.json > $R/c4-43m-hb.log 2>&1
echo "43M rc $? at $(el) s" | tee -a $R/time.txt; grep "updates in" $R/c4-43m-hb.log
