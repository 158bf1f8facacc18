#!/usr/bin/env bash
# Written in the twelfth session for the next one: branch merge-last (b069339 or later),
# the last level of a count merged with its other list. A/B through the knob on the
# branch's code (MERGE_LAST 1 is the branch's default, 0 is main's executor), taking
# turns on one machine: the 43M 4-cycle, then the 43M triangle (its level 2 is a last
# level with two lists too). Prepare with:
#   git archive --format=tar --prefix=.base-merge/ merge-last | tar x && rm -rf .base-merge/bench/results .base-merge/docs
# Carry: .devrun .whl-gpu .base-merge
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-merge >/dev/null 2>&1 || exit 1
cp .devrun/next5.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site
timeout -k 5 90 python3 -P .base-merge/bench/debug/host_path_cost.py --vertices 4800000 --updates 1048576 --repeat 2 > $R/host-path.log 2>&1
echo "host path rc $? at $(el) s: $(tail -1 $R/host-path.log)" | tee -a $R/time.txt
[ -f /tmp/g43.npz ] || timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph ready at $(el) s" | tee -a $R/time.txt
# (pattern, kernel defines, tag): MERGE_LAST 1 at the branch's defaults, 0 (main's
# executor), 1 with MERGE_PREFETCH; the triangle at 1 and 0 (kernels already built); then
# MERGE_RATIO 2 and a second turn, as time allows.
for run in "4cycle -DMERGE_LAST=1 m1" "4cycle -DMERGE_LAST=0 m0" "4cycle -DMERGE_PREFETCH=1 m1p" \
           "triangle -DMERGE_LAST=1 m1" "triangle -DMERGE_LAST=0 m0" "4cycle -DMERGE_RATIO=2 m1r2" \
           "4cycle -DMERGE_LAST=1 m1" "4cycle -DMERGE_LAST=0 m0"; do
  set -- $run; p=$1; d=$2; tag=$3
  [ $(el) -gt 450 ] && break
  n=$(ls $R/$p-$tag-*.json 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES=$d timeout -k 5 $(( 585 - $(el) )) python3 -P .base-merge/bench/scale_up_bench.py --backend gpu \
      --graph /tmp/g43.npz --patterns $p --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$p-$tag-$n.json > $R/$p-$tag-$n.log 2>&1
  echo "$p $d run $n rc $? at $(el) s: $(tail -1 $R/$p-$tag-$n.log)" | tee -a $R/time.txt
done
