#!/usr/bin/env bash
# Thirteenth session, call 5: main 7e588d5. The oracle count rows with MERGE_LAST 1 (main's
# default) and 0 (the executor before merge-last) in turns, to tell code from machine (call 3
# found the heavy rows slower than the twelfth session's); then the service on the GPU
# backend through loadgen.
# Carry: .devrun .whl-gpu .whl .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/a; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/a . >/dev/null 2>&1 || exit 1
cp .devrun/next9.sh $R/; nvidia-smi -L > $R/device.txt; git log --oneline -1 > $R/code.txt 2>/dev/null
export PYTHONPATH=/tmp/a:/tmp/site
for d in "" -DMERGE_LAST=0 "" -DMERGE_LAST=0 "" -DMERGE_LAST=0; do
  [ $(el) -gt 240 ] && break
  tag=m${d#-DMERGE_LAST=}; [ -z "$d" ] && tag=main
  n=$(ls -d $R/oracle-$tag-* 2>/dev/null | wc -l); n=$((n + 1))
  DCSM_KERNEL_DEFINES=$d timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/oracle-$tag-$n --data .shdata \
      --oracle-count-only --skip-latency > $R/oracle-$tag-$n.log 2>&1
  echo "oracle $tag run $n rc $? at $(el) s: $(grep '^| all | count' $R/oracle-$tag-$n/gpu_bench.md)" | tee -a $R/time.txt
done
unset PYTHONPATH
timeout -k 5 $(( 580 - $(el) )) bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 3 \
    --timeout 200 --tag binary 100000,500000,750000,1000000 -- --drain-s 8 --vertices 200000 > $R/svc.log 2>&1
echo "service rc $? at $(el) s" | tee -a $R/time.txt; tail -5 $R/svc.log
