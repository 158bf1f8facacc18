#!/usr/bin/env bash
# Session 30, call 5: branch host (main + an idle kernel's copied write published as soon
# as its copy lands: InputRing._publish), the oracle count rows in turns, first on the
# machine: w main's behaviour (DCSM_IDLE_WAIT=0), i the branch;
# python3 bench/debug/compare_turns.py $R w1 i1 ... w5 i5; then apply_profile's timelines
# (i) and the GPU tests of the input ring and of long runs read by the updater warps.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session30/call5/c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for turn in w1 i1 i2 w2 w3 i3 i4 w4 w5 i5; do
  [ $(el) -gt 150 ] && break
  iw=1; [ ${turn:0:1} = w ] && iw=0
  DCSM_IDLE_WAIT=$iw timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R $(ls -d $R/[wi][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row
  timeout -k 5 30 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 > $R/prof-i-$1-$2.txt 2>&1
  echo "profile i $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-i-$1-$2.txt | cut -c1-60)" | tee -a $R/time.txt
done
timeout -k 5 $(( 250 - $(el) )) python3 -m pytest -q -p no:cacheprovider tests/gpu/test_input_ring_gpu.py \
    tests/gpu/test_engine_gpu.py -k "input_ring or long_runs_read or random_streams" > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
