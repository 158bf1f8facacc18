#!/usr/bin/env bash
# Written in session 40 (237 s of device time left, under the 240 s a machine needs; never
# run). Branch `completion-reader` (63ae86c: 07ac892 and a review's five fixes): an
# apply's completions read on a thread of its own (gpu/completion_reader.py) while the
# calling thread sends the rest, for unpaced applies of >= 8,192 updates where the engine has host threads. Why: session 40's call 5
# found drain_done the largest host step of a light row (0.26-0.44 ms of 28,900 records,
# read only after the last piece is sent). Its CPU tests
# (tests/engine/test_gpu_completion_reader.py) drive the real thread; no GPU has run it.
# (1) Turns of the 22 oracle count rows: o (this checkout, main) and n (the branch), the
#     first of each untimed (numba's compile).
# (2) With n: test_oracle_gpu.py, test_engine_gpu.py and test_input_ring_gpu.py.
# (3) apply_profile of Q_1 deletion10 and Q_7 insertion10 with n (drain_done's calls now
#     come from the reader's thread too: see "host totals").
# (4) n beside RapidFlow, in the time left.
# Merge the branch only if the tests pass and the turns are lower.
# Carry: .dev28/shd.tar.xz .dev28/reader.tgz (`git archive completion-reader pyproject.toml
# README.md dcsm gpu schemas service loadgen | gzip > .dev28/reader.tgz`) .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session40/next/c1-completion-reader.sh $R/
mkdir -p /tmp/rd && tar xzf .dev28/reader.tgz -C /tmp/rd
(cd /tmp/rd && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mr . > $R/install-reader.log 2>&1)
md5sum /tmp/rd/gpu/*.py > $R/files-reader.md5
prewarm "16384|"
pp() { case $1 in o) echo /tmp/m;; n) echo /tmp/mr;; esac; }
mkdir -p $R/turns
for turn in o0 n0 o1 n1 o2 n2 o3 n3 o4 n4 o5 n5; do
  [ $(el) -gt 150 ] && break
  PYTHONPATH=$(pp ${turn:0:1}) timeout -k 5 50 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
rm -rf $R/turns/o0 $R/turns/n0
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[on][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for q in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $q
  PYTHONPATH=/tmp/mr timeout -k 5 30 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 \
      --batch-cap 16384 > $R/prof-$1-$2.txt 2>&1
  echo "apply_profile $1 $2 rc $? at $(el) s: $(grep -E '^apply' $R/prof-$1-$2.txt)" | tee -a $R/time.txt
  grep -E "host totals" $R/prof-$1-$2.txt | tee -a $R/time.txt
done
PYTHONPATH=/tmp/mr DCSM_PREWARM=14 gpu_tests $(( 500 - $(el) )) \
    tests/gpu/test_oracle_gpu.py tests/gpu/test_input_ring_gpu.py tests/gpu/test_engine_gpu.py
if [ $(el) -lt 500 ]; then
  PYTHONPATH=/tmp/mr beside_rapidflow $(( 580 - $(el) ))
fi
