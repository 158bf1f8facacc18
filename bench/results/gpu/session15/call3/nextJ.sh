#!/usr/bin/env bash
# Fifteenth session, last call: branch big-pieces (an apply goes in pieces of n/16 updates,
# 4,096 to 16,384: a long apply makes fewer, larger kernel batches) against main (e08ee7a,
# .base-main). One run of pieces of 16,384 gave the 43M triangle 7.25M/s (main 5.73-6.83M/s
# in the same call).
#  1. tests/gpu/test_oracle_gpu.py and test_long_run.py on the branch (while the graph is made);
#  2. the 43M triangle, branch and main in turns (three each); the 4-cycle on the branch once;
#  3. the oracle count rows with RapidFlow beside each (branch), then the response part;
#  4. the service on the GPU backend (branch), binary, 100K-1M/s.
# Carry: .devrun .whl-j .shdata/oracle-github .peers/bin/RapidFlow-native.out .base-main
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
export CUPY_CACHE_DIR=/tmp/cupy-cache; mkdir -p $CUPY_CACHE_DIR
[ -f .devrun/cupy-cache.tgz ] && tar xzf .devrun/cupy-cache.tgz -C $CUPY_CACHE_DIR  # not carried this time (64 MiB)
trap 'cd $OUT && tar czf r.tgz r && rm -rf r' EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-j/*.whl || exit 1
rm -rf /tmp/m /tmp/mp
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mp .base-main >/dev/null 2>&1 || exit 1
cp .devrun/nextJ.sh $R/; nvidia-smi -L > $R/device.txt; git log --oneline -1 > $R/head.txt 2>/dev/null
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
(timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" && touch -d @1795916919.826114635 /tmp/g43.npz) &
timeout -k 5 150 python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py --durations=3 > $R/tests.log 2>&1
echo "tests rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
wait
for run in "triangle m 1" "triangle mp 1" "triangle m 2" "triangle mp 2" "triangle m 3" "triangle mp 3" "4cycle m 1"; do
  set -- $run; [ $(el) -gt 330 ] && break
  PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 90 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$1-$2-$3.json > $R/$1-$2-$3.log 2>&1
  echo "$1 $2 run $3 rc $? at $(el) s: $(tail -1 $R/$1-$2-$3.log)" | tee -a $R/time.txt
done
rm -f /tmp/g43.npz
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle with RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; grep -A4 "### Totals" $R/oracle-rf/gpu_bench.md | tail -1
[ $(el) -lt 440 ] && { timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search > $R/latency.log 2>&1
  echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -4 | cut -c1-120; }
S="bash scripts/service-bench.sh --whl .whl-j --out $R/svc --backend gpu --no-pyspy"
[ $(el) -lt 480 ] && { timeout -k 5 $(( 585 - $(el) )) $S --duration 3 --timeout 90 --tag binary 100000,500000,750000,1000000 -- --drain-s 8 --vertices 200000 > $R/svc-binary.log 2>&1
  echo "svc binary rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc/binary/loadgen.log | cut -d' ' -f2-; }
