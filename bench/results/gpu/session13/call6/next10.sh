#!/usr/bin/env bash
# Thirteenth session, call 6: main 7e588d5. Call 5 found the oracle count rows 4 % slower
# with merge-last (MERGE_LAST 1) than without. Does a higher MERGE_MIN (merge only when the
# shorter list has >= this many entries) keep the 43M 4-cycle's gain and lose the oracle cost?
# Oracle rows at main's MERGE_MIN 128 and at 1024 in turns, then the 43M 4-cycle at 1024.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next10.sh $R/; nvidia-smi -L > $R/device.txt; cp .devrun/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/a:/tmp/site
for turn in 1 2 3; do
  for d in "" -DMERGE_MIN=1024; do
    tag=min${d#-DMERGE_MIN=}; [ -z "$d" ] && tag=main
    DCSM_KERNEL_DEFINES=$d timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/oracle-$tag-$turn --data .shdata \
        --oracle-count-only --skip-latency > $R/oracle-$tag-$turn.log 2>&1
    echo "oracle $tag turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  done
done
timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key: call 4's graph, same seed and size
echo "graph ready at $(el) s" | tee -a $R/time.txt
for d in -DMERGE_MIN=1024 ""; do
  [ $(el) -gt 250 ] && break
  tag=min${d#-DMERGE_MIN=}; [ -z "$d" ] && tag=main
  DCSM_KERNEL_DEFINES=$d timeout -k 5 $(( 400 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz \
      --patterns 4cycle --batch-size 1048576 --static-cache /tmp/static43.json --out $R/4cycle-$tag.json > $R/4cycle-$tag.log 2>&1
  echo "4cycle $tag rc $? at $(el) s: $(tail -1 $R/4cycle-$tag.log)" | tee -a $R/time.txt
done
