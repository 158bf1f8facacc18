#!/usr/bin/env bash
# Session 10, call 7 (warm machine, /tmp/new from call 6): the 43M triangle insertion in
# applies of 1M with the working tree (J_COUNT now finds both ends' versions together).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
cp .devrun/c7.sh $R/
export PYTHONPATH=/tmp/new:/tmp/site
[ -f /tmp/g43.npz ] || timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph at $(el) s" | tee -a $R/time.txt
timeout -k 5 $((150 - $(el))) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle \
    --churn 1 --batch-size 1048576 --out $R/tri-b1048576.json > $R/tri-b1048576.log 2>&1
echo "triangle rc $? at $(el) s" | tee -a $R/time.txt; grep -i "updates/s\|exact" $R/tri-b1048576.log | tail -3
