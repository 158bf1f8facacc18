#!/usr/bin/env bash
# Session 28 call 5: e (control records due before a piece's first update written ahead of
# it, so that the piece still goes straight into the ring) against b (1bb4fcb, main) in
# turns, the oracle count rows without RapidFlow; then the engine tests that place control
# records, and the random streams, on e. Carry: .dev28
source .dev28/common.sh
cp .dev28/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py .dev28/main/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/e /tmp/b; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/e . >/dev/null 2>&1 || exit 1
cp -r /tmp/e /tmp/b && cp .dev28/main/engine.py .dev28/main/query_slots.py /tmp/b/dcsm/gpu/
for turn in b1 e1 b2 e2 b3 e3 b4 e4; do
  [ $(el) -gt 110 ] && break
  PYTHONPATH=/tmp/${turn:0:1} timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt; python3 .dev28/summ.py $R/$turn | head -1 | tee -a $R/time.txt
done
DCSM_SUITE_SECONDS=$(( 290 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "controls_dated or register_and_unregister or long_runs or registered_mid_stream or random_streams" > $R/tests.log 2>&1
echo "engine tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
