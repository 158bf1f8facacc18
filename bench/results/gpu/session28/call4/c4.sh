#!/usr/bin/env bash
# Session 28 call 4: branch "controls-due" (a piece goes straight into the input ring unless
# a control record is due within it; main: unless any control record waits) against main
# 488547b in turns, the oracle count rows (bench/gpu_bench.py, as gpu-suite runs them, no
# RapidFlow), then the engine tests that place control records, and the random streams;
# then the branch beside RapidFlow's median. Carry: .dev28 .peers/bin/RapidFlow.out
source .dev28/common.sh
cp .dev28/c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py .dev28/main/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/b /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
cp -r /tmp/b /tmp/m && cp .dev28/main/engine.py .dev28/main/query_slots.py /tmp/m/dcsm/gpu/
# m: main; b: the branch; c: the branch, batch cap 32,768, one piece an apply; d: the
# branch, pieces of 16,384. Then the engine tests that place control records.
opts() { case $1 in c) echo "--batch-cap 32768 --piece 32768" ;; d) echo "--piece 16384" ;; esac; }
for turn in m1 b1 c1 d1 m2 b2 c2 d2; do
  [ $(el) -gt 250 ] && break
  t=${turn:0:1}; src=/tmp/b; [ $t = m ] && src=/tmp/m
  PYTHONPATH=$src timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 $(opts $t) > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt; python3 .dev28/summ.py $R/$turn | head -1 | tee -a $R/time.txt
done
DCSM_SUITE_SECONDS=$(( 470 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "controls_dated or register_and_unregister or long_runs or registered_mid_stream or random_streams" > $R/tests.log 2>&1
echo "engine tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 $(( 585 - $(el) )) python3 -P bench/gpu_bench.py --out $R/b-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/b-rf.log 2>&1
echo "branch beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/b-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/b-rf | tee -a $R/time.txt
