#!/usr/bin/env bash
# Written in the fifteenth session for the next one: main after big pieces (an unpaced
# apply of n updates in pieces of n/16, 4,096-16,384; a paced one in pieces of 4,096,
# b0a4dce, never run on a device), PIVOT_MIN removed and RING_WIDE made a fenced knob
# (both default cubins unchanged: md5 172e88a6..., static 83e09715...).
#  1. The whole GPU suite at the defaults: the engine file (kernel cache first filled by 8
#     shards), then the rest of tests/gpu;
#  2. the response part twice: the sustained 1M/s row's p99 was 1,161 us with paced pieces
#     of 12,500 (session15 call 3) against ~700 us before; b0a4dce should bring it back;
#  3. the input read, RING_WIDE 8 against 4 in turns on the oracle count rows (their
#     batches of ~6,200 records took 174 us each to read at 4; at 8 read_wide spills
#     604/640 B), then the response part at 8.
# Copy into .devrun/ with ../../session14/common.sh as .devrun/common.sh, and a kernel cache in
# .devrun/cupy-cache.tgz if one is at hand. Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/nextL.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
DCSM_PREWARM=8 DCSM_RESULTS=$R/suite-engine timeout -k 5 330 bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py > $R/suite-engine.log 2>&1
echo "engine tests rc $? at $(el) s: $(tail -1 $R/suite-engine/gpu-tests.log)" | tee -a $R/time.txt
DCSM_RESULTS=$R/suite-rest timeout -k 5 $(( 500 - $(el) )) bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py > $R/suite-rest.log 2>&1
echo "other tests rc $? at $(el) s: $(tail -1 $R/suite-rest/gpu-tests.log)" | tee -a $R/time.txt
B=bench/gpu_bench.py
for run in "latency  1" "oracle  1" "oracle -DRING_WIDE=8 1" "oracle  2" "oracle -DRING_WIDE=8 2" "latency -DRING_WIDE=8 1" "latency  2"; do
  set -- $run; what=$1; d=${3:+$2}; n=${3:-$2}; tag=$(echo "${d:-default}" | tr -d '=-')
  [ $(el) -gt $([ $what = latency ] && echo 540 || echo 570) ] && continue
  if [ $what = oracle ]; then
    DCSM_KERNEL_DEFINES="$d" timeout -k 5 30 python3 -P $B --out $R/oracle-$tag-$n --data .shdata --oracle-count-only --skip-latency > $R/oracle-$tag-$n.log 2>&1
  else
    DCSM_KERNEL_DEFINES="$d" timeout -k 5 50 python3 -P $B --out $R/latency-$tag-$n --data .shdata --skip-search > $R/latency-$tag-$n.log 2>&1
  fi
  echo "$what '$d' $n rc $? at $(el) s" | tee -a $R/time.txt
  [ $what = latency ] && grep -E "t=0\)" $R/latency-$tag-$n/gpu_bench.md | head -4 | cut -c1-120
done
