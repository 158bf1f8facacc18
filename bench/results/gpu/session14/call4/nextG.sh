#!/usr/bin/env bash
# Fourteenth session, call 4: branch order-tiles (J_ORDER per position, tiled by shuffles).
#  1. its GPU tests: the kernel cache first filled by 8 shards side by side, each test ending
#     once its first kernel is compiled (.devrun/prewarm_plugin.py), then the real serial run;
#  2. the oracle count rows, main (.base-main) and the branch in turns, then the branch's with
#     RapidFlow beside; the branch's response times (gpu_bench.py --skip-search);
#  3. the 43M 4-cycle on the branch (J_ORDER is the updater's; the 4-cycle is the
#     executor's), kernel knobs in turns, as long as time allows.
# Carry: .devrun .whl-gpu .base-main .shdata/oracle-github .peers/bin/RapidFlow-native.out
source .devrun/common.sh
rm -rf /tmp/m /tmp/mm
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mm .base-main >/dev/null 2>&1 || exit 1
cp .devrun/nextG.sh .devrun/prewarm_plugin.py $R/; nvidia-smi -L > $R/device.txt; git log --oneline -1 > $R/head.txt 2>/dev/null
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
(PYTHONPATH=/tmp/m:/tmp/site timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))" && touch -d @1795916919.826114635 /tmp/g43.npz) &
export DCSM_SHARED_DATA=$PWD/.shdata
T="python3 -P -m pytest -q -p no:cacheprovider --confcutdir=tests/gpu"
F="tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py tests/gpu/test_long_run.py"
PYTHONPATH=/tmp/m:/tmp/site $T --collect-only $F 2>/dev/null | grep '::' > /tmp/ids
echo "$(wc -l < /tmp/ids) tests" | tee -a $R/time.txt
for i in 0 1 2 3 4 5 6 7; do
  awk -v i=$i 'NR % 8 == i' /tmp/ids > /tmp/ids.$i
  (mapfile -t ids < /tmp/ids.$i; PYTHONPATH=/tmp/m:/tmp/site:$PWD/.devrun timeout -k 5 200 $T -p prewarm_plugin "${ids[@]}" > $R/prewarm-$i.log 2>&1) &
done
wait
echo "prewarm done at $(el) s: $(ls $CUPY_CACHE_DIR | wc -l) cache files; $(tail -qn1 $R/prewarm-*.log | tr '\n' ';')" | tee -a $R/time.txt
PYTHONPATH=/tmp/m:/tmp/site timeout -k 5 $(( 560 - $(el) )) $T $F --durations=5 > $R/tests.log 2>&1
echo "tests rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
for turn in 1 2; do
  for v in main branch; do
    site=/tmp/m; [ $v = main ] && site=/tmp/mm
    PYTHONPATH=$site:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$v-$turn --data .shdata --oracle-count-only --skip-latency > $R/oracle-$v-$turn.log 2>&1
    echo "oracle $v turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  done
done
export PYTHONPATH=/tmp/m:/tmp/site
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --rapidflow .peers/bin/RapidFlow-native.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows with RapidFlow rc $? at $(el) s: $(grep -A4 '### Totals' $R/oracle-rf/gpu_bench.md | tail -1)" | tee -a $R/time.txt
timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -4 | cut -c1-170
n=0
for d in -DMIN_BLOCKS=2 "" -DMERGE_RATIO=4 -DDONATE_EVERY=8 -DMIN_BLOCKS=4 -DDONATE_EVERY=64 -DPAIRS_MAX_LIST=512; do
  [ $(el) -gt 540 ] && break
  n=$((n + 1)); tag=$(echo "${d:-default}" | tr -d '=-')
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 $(( 588 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns 4cycle \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/4cycle-$n-$tag.json > $R/4cycle-$n-$tag.log 2>&1
  echo "4cycle '$d' run $n rc $? at $(el) s: $(tail -1 $R/4cycle-$n-$tag.log)" | tee -a $R/time.txt
done
