#!/usr/bin/env bash
# For the next session (written 2026-11-28 ~13:15 UTC): branch merge-pairs (.base-merge:
# `git archive merge-pairs | tar -x -C .base-merge --exclude=bench/results`), merged last
# levels for pairs of long lists (docs/hub-probes.md, "Merging hub pairs"). Carry: .devrun
# .whl-gpu .shdata .base-merge. ~560 s. 1) its engine tests (the merged-levels test forces
# every eligible last level merged; random streams; the pairs test; the hub); 2) the 43M
# 4-cycle at MERGE_MIN 128 (the branch) and 0 (main's walk) on one graph; 3) the 10M rows
# likewise, alternating; 4) the oracle count rows at both.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
rm -rf /tmp/mg
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mg .base-merge >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/mg:/tmp/site
cp .devrun/next5.sh $R/
echo "setup at $(el) s" | tee -a $R/time.txt
(cd .base-merge && DCSM_SHARED_DATA=../.shdata timeout -k 5 200 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider --confcutdir=tests/gpu \
    -k "merged_last or last_levels or random_streams or hub_vertex" > $R/mg-tests.log 2>&1)
echo "tests rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/mg-tests.log
timeout 80 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph 43 at $(el) s" | tee -a $R/time.txt
for v in 128 0; do
  [ $(el) -gt 380 ] && break
  DCSM_KERNEL_DEFINES="-DMERGE_MIN=$v" timeout -k 5 100 python3 -P .base-merge/bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns 4cycle --out $R/c4-43m-$v.json > $R/c4-43m-$v.log 2>&1
  echo "43M 4cycle MERGE_MIN=$v rc $? at $(el) s" | tee -a $R/time.txt; tail -1 $R/c4-43m-$v.log
done
rm -f /tmp/g43.npz
[ $(el) -lt 440 ] && timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g10.npz', chunglu_graph(10000000, 1111111, gamma=2.3, seed=0))"
k=0
for v in 128 0 128 0; do
  [ $(el) -gt 500 ] && break
  k=$((k + 1))
  DCSM_KERNEL_DEFINES="-DMERGE_MIN=$v" timeout -k 5 40 python3 -P .base-merge/bench/scale_up_bench.py --backend gpu --graph /tmp/g10.npz \
      --patterns 4cycle,triangle --out $R/c4-10m-$v-$k.json > $R/c4-10m-$v-$k.log 2>&1
  echo "10M MERGE_MIN=$v rc $? at $(el) s" | tee -a $R/time.txt
done
for v in 128 0; do
  [ $(el) -gt 560 ] && break
  DCSM_KERNEL_DEFINES="-DMERGE_MIN=$v" timeout -k 5 30 python3 -P .base-merge/bench/gpu_bench.py --out $R/oracle-$v --data .shdata --oracle-count-only --skip-latency > $R/oracle-$v.log 2>&1
  echo "oracle MERGE_MIN=$v rc $? at $(el) s" | tee -a $R/time.txt
done
