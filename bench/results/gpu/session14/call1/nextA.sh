#!/usr/bin/env bash
# Written in the thirteenth session for the next one: branch gc-eager, A/B on the 43M graph.
#   GC_EAGER (kernel, 1 on the branch): the collector advances the GC pointer between rounds
#     of frees too; _READ_AHEAD (host, gpu/engine.py, 2 on the branch, 0 = main): the host
#     reads completions between pieces once half the update slots wait on it; SEARCH_WAYS
#     (kernel, 4 on the branch, 2 = main): per-lane searches take three pivots a step, and
#     EXEC_SEARCH_WAYS (the executor's own, default SEARCH_WAYS).
#   GC_EAGER=0 SEARCH_WAYS=2 _READ_AHEAD=0 is main's behaviour (pass_completed, not inlined,
#   makes the cubin differ).
#   Then maxu 2^17 (more update slots) and pieces of 16,384 (gpu/engine.py _PIECE: the
#   device's batch read may wait on the host's pieces, 4,096 updates each) on the triangle,
#   and MERGE_RATIO 32 on the 4-cycle.
# Prepare: git archive --format=tar --prefix=.base-gc/ gc-eager | tar x && rm -rf .base-gc/bench/results .base-gc/docs
# Carry: .devrun .whl-gpu .base-gc
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m .base-gc >/dev/null 2>&1 || exit 1
cp .devrun/nextA.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key (thirteenth session, call 4's graph)
echo "graph ready at $(el) s" | tee -a $R/time.txt
# (pattern, kernel defines, host settings (gpu/engine.py), extra scale_up args, tag)
R2=e._READ_AHEAD=2; R0=e._READ_AHEAD=0
M="-DGC_EAGER=0 -DSEARCH_WAYS=2"
X='-DEXEC_SEARCH_WAYS=2'
for run in "triangle - $R2 - e1r2s4" "triangle $M $R0 - main" "4cycle - $R2 - e1r2s4" "4cycle $M $R0 - main" \
           "triangle $X $R2 - e1r2s4x2" "4cycle $X $R2 - e1r2s4x2" "triangle -DSEARCH_WAYS=2 $R2 - e1r2s2" \
           "triangle - $R0 - e1r0s4" "triangle - $R2 - e1r2s4" "triangle $M $R0 - main" "4cycle - $R2 - e1r2s4" \
           "4cycle $M $R0 - main" "4cycle -DMERGE_RATIO=32 $R2 - e1r2s4m32" \
           "triangle - $R2 --engine=maxu=131072 e1r2s4u17" "triangle - $R2;e._PIECE=16384 - e1r2s4p16"; do
  set -- $run; p=$1; host=${@: -3:1}; extra=${@: -2:1}; tag=${@: -1}; [ "$extra" = - ] && extra=
  d=$(echo "$run" | awk '{for (i = 2; i <= NF - 3; ++i) printf "%s ", $i}'); [ "$d" = "- " ] && d=
  [ $(el) -gt 480 ] && break
  n=$(ls $R/$p-$tag-*.json 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 $(( 585 - $(el) )) python3 -P -c "
import runpy, sys
import dcsm.gpu.engine as e
$host
sys.argv = ['scale_up_bench.py'] + sys.argv[1:]
runpy.run_path('.base-gc/bench/scale_up_bench.py', run_name='__main__')" --backend gpu --graph /tmp/g43.npz --patterns $p \
      --batch-size 1048576 --static-cache /tmp/static43.json $extra --out $R/$p-$tag-$n.json > $R/$p-$tag-$n.log 2>&1
  echo "$p $d $host $extra run $n rc $? at $(el) s: $(tail -1 $R/$p-$tag-$n.log)" | tee -a $R/time.txt
done
