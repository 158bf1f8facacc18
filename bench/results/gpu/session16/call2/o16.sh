#!/usr/bin/env bash
# Session 16 call 2: main after merging next-kernel (bb022ce: read-once, FUSE_EDIT_ALLOC=1,
# FUSE_PUBLISH_COUNT=1) at 43M edges, against main before the merge (7e23a7c, .base-om) and
# before the admission prefetch (235e31d, .base-np), in turns:
#  1. the host path on this host, main and .base-np (bench/debug/host_path_cost.py);
#  2. the triangle: om / m / np in turns (om-m: the kernel's changes; np-om: the prefetch);
#  3. the 4-cycle: om, m, m at MERGE_PREFETCH=2 and at MERGE_SPEC=1, in turns.
# Carry: .devrun .whl-gpu .base-om .base-np
source .devrun/common.sh
rm -rf /tmp/m /tmp/np /tmp/om
for v in m:. np:.base-np om:.base-om; do
  python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/${v%%:*} ${v#*:} >/dev/null 2>&1 || exit 1
done
cp .devrun/o16.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz
echo "graph ready at $(el) s" | tee -a $R/time.txt
for v in m np; do
  PYTHONPATH=/tmp/$v:/tmp/site timeout -k 5 60 python3 -P bench/debug/host_path_cost.py --vertices 4800000 --updates 1048576 --piece 16384 --repeat 2 > $R/host-path-$v.txt 2>&1
  echo "host path $v: $(grep total $R/host-path-$v.txt)" | tee -a $R/time.txt
done
for run in "triangle om 1" "triangle m 1" "triangle np 1" "4cycle om 1" "4cycle m 1" "4cycle m 1 -DMERGE_PREFETCH=2" "4cycle m 1 -DMERGE_SPEC=1" \
           "triangle om 2" "triangle m 2" "triangle np 2" "4cycle m 2 -DMERGE_PREFETCH=2" "4cycle m 2" "4cycle om 2" "4cycle m 2 -DMERGE_SPEC=1" \
           "triangle m 3" "triangle om 3"; do
  set -- $run; d=${4:-}; tag=$1-$2$(echo "$d" | tr -d '=-')-$3; [ $(el) -gt $([ $1 = 4cycle ] && echo 500 || echo 530) ] && continue
  DCSM_KERNEL_DEFINES="$d" PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s: $(tail -1 $R/$tag.log)" | tee -a $R/time.txt
done
