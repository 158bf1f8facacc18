#!/usr/bin/env bash
# Written in session 33 for the next one (not run: the 230 s of device time left could not
# start another machine). Run on main, where host_threads is merged off by default.
# Session 33's call 3 ran the branch with encode_updates' body in an njit helper (13x
# slower): its m turns were not main's behaviour, and its parallel turns encoded slowly
# too. In turns m (DCSM_HOST_THREADS=0) and q (4) on the 22 oracle count rows; then q
# beside RapidFlow (same host, same call); then the engine and oracle GPU tests with 4
# threads. If q wins, make 4 the default where the host has 8 cores or more.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session33/next/c1-host-threads.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
mkdir -p $R/turns
for turn in m1 q1 q2 m2 m3 q3; do
  [ $(el) -gt 85 ] && break
  DCSM_HOST_THREADS=$([ ${turn:0:1} = m ] && echo 0 || echo 4) timeout -k 5 60 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mq][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for t in $R/turns/[mq][0-9]; do python3 .dev28/summ.py $t 2>/dev/null | head -1 | sed "s|^|$(basename $t) |"; done | tee -a $R/time.txt
DCSM_HOST_THREADS=4 timeout -k 5 $(( 150 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "q beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>/dev/null | head -1 | tee -a $R/time.txt
DCSM_HOST_THREADS=4 DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 545 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests (4 host threads) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
