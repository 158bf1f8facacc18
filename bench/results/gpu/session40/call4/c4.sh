#!/usr/bin/env bash
# Session 40, call 4: the completion ring read on the host's numba threads
# (rings.drain_done_parallel, when >= 4,096 sent updates wait to be read). Call 3's profile:
# Q_1 deletion10's last two pumps read 28,900 records in 0.61 ms on one thread, 0.43 ms
# after the device's last finish.
# (1) Turns of the 22 oracle count rows: o (65ffa07, carried as .dev28/main-old.tgz: `git
#     archive 65ffa07 pyproject.toml README.md dcsm gpu schemas service loadgen`), n (this
#     checkout), x (this checkout, --piece 32768 --batch-cap 32768: call 3's profile, Q_7
#     insertion10 1.70 against 2.02 ms).
# (2) apply_profile of Q_1 deletion10 and Q_7 insertion10 with n.
# (3) The GPU tests that read long runs of completions: test_oracle_gpu.py (counts and
#     embeddings on 28,900-update streams), test_input_ring_gpu.py.
# (4) This checkout beside RapidFlow.
# Carry: .dev28/shd.tar.xz .dev28/main-old.tgz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session40/call4/c4.sh $R/
mkdir -p /tmp/old && tar xzf .dev28/main-old.tgz -C /tmp/old
(cd /tmp/old && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m0 . > $R/install-old.log 2>&1)
prewarm "16384|" "32768|"
pp() { case $1 in o) echo /tmp/m0;; *) echo /tmp/m;; esac; }
flags() { case $1 in x) echo "--piece 32768 --batch-cap 32768";; esac; }
mkdir -p $R/turns
for turn in o0 n0 o1 n1 x1 o2 n2 x2 o3 n3 x3 o4 n4 x4; do
  [ $(el) -gt 150 ] && break
  # shellcheck disable=SC2046
  PYTHONPATH=$(pp ${turn:0:1}) timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 $(flags ${turn:0:1}) > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
rm -rf $R/turns/o0 $R/turns/n0  # numba's first compile on this machine
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[onx][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for q in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $q
  timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 \
      > $R/prof-$1-$2.txt 2>&1
  echo "apply_profile $1 $2 rc $? at $(el) s: $(grep -E '^apply|^timed call' $R/prof-$1-$2.txt | tr '\n' ' ')" | tee -a $R/time.txt
  grep -E "^  (_settle|_pump)" $R/prof-$1-$2.txt | tee -a $R/time.txt
done
DCSM_SUITE_SECONDS=$(( 420 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_oracle_gpu.py tests/gpu/test_input_ring_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
if [ $(el) -lt 420 ]; then
  timeout -k 5 $(( 510 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
  echo "beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^\| (oracle|all)" $R/oracle-rf/gpu_bench.md | cut -d"|" -f3-5,8-10 | head -40 | tee -a $R/time.txt
fi
