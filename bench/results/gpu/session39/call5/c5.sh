#!/usr/bin/env bash
# Session 39, call 5: the host's one-pass admission (rings.admit_encode, commit 3ce14f3)
# against main before it (ae33443, carried as .dev28/main-old.tgz: `git archive ae33443
# pyproject.toml README.md dcsm gpu schemas service loadgen`), both with DELETE_PATH on.
# (1) Turns of the 22 oracle count rows: o (ae33443) and f (this checkout).
# (2) The GPU tests that run the host's apply path: test_engine_gpu.py, test_oracle_gpu.py,
#     test_input_ring_gpu.py.
# (3) This checkout beside RapidFlow, if time is left.
# Carry: .dev28/shd.tar.xz .dev28/main-old.tgz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session39/call5/c5.sh $R/
mkdir -p /tmp/old && tar xzf .dev28/main-old.tgz -C /tmp/old
(cd /tmp/old && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m0 . > $R/install-old.log 2>&1)
prewarm "16384|"
pp() { case $1 in o) echo /tmp/m0;; f) echo /tmp/m;; esac; }
mkdir -p $R/turns
for turn in o1 f1 o2 f2 o3 f3 o4 f4 o5 f5; do
  [ $(el) -gt 90 ] && break
  PYTHONPATH=$(pp ${turn:0:1}) timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[of][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 365 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py tests/gpu/test_input_ring_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
if [ $(el) -lt 355 ]; then
  timeout -k 5 $(( 430 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
  echo "beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^\| (oracle|all)" $R/oracle-rf/gpu_bench.md | cut -d"|" -f3-5,8-10 | head -40 | tee -a $R/time.txt
fi
