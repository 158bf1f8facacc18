#!/usr/bin/env bash
# Session 41, call 2: 32-byte completion records (this checkout) against main's 48-byte ones.
# Session 40's call 5 found the host's read of the Done ring (drain_done) the largest host
# step of a light row, 9-15 ns a record; with the records' lines cold it is bound by the
# lines read (bench/debug/drain_cost.py here: the same ns with and without the time
# conversions). Struct Done now holds t_start and two float spans, the stamp tau's low 32
# bits: 4 records a 128-byte line, not 2.67.
# (1) Turns of the 22 oracle count rows: o (main, carried as .dev28/main-o.tgz: `git archive
#     21fb19b pyproject.toml README.md dcsm gpu schemas service loadgen`), s (this checkout);
#     the first of each untimed.
# (2) apply_profile of Q_1 deletion10 and Q_7 insertion10 with o and with s (drain_done's
#     total in "host totals").
# (3) With s: test_oracle_gpu.py, test_engine_gpu.py (self-checks, device clock, relaunch),
#     test_input_ring_gpu.py, in the time left.
# Carry: .dev28/shd.tar.xz .dev28/main-o.tgz
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session41/call2/c2.sh $R/
mkdir -p /tmp/mo-src && tar xzf .dev28/main-o.tgz -C /tmp/mo-src
(cd /tmp/mo-src && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mo . > $R/install-o.log 2>&1)
md5sum /tmp/mo-src/gpu/*.cu /tmp/mo-src/gpu/*.cuh /tmp/mo-src/gpu/*.py > $R/files-o.md5
prewarm "16384|"  # s's kernel; o's compiles in its untimed first turn
pp() { case $1 in o) echo /tmp/mo;; s) echo /tmp/m;; esac; }
mkdir -p $R/turns
for turn in o0 s0 o1 s1 o2 s2 o3 s3 o4 s4 o5 s5; do
  [ $(el) -gt 170 ] && break
  PYTHONPATH=$(pp ${turn:0:1}) timeout -k 5 $([ ${turn:1} = 0 ] && echo 120 || echo 50) python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
rm -rf $R/turns/o0 $R/turns/s0  # numba's first compile on this machine
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[os][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for v in o s; do
  for q in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $q
    PYTHONPATH=$(pp $v) timeout -k 5 30 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 \
        --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "$v apply_profile $1 $2 rc $? at $(el) s: $(grep -E '^apply' $R/prof-$v-$1-$2.txt)" | tee -a $R/time.txt
    grep -oE "'drain_done': [0-9.]+" $R/prof-$v-$1-$2.txt | tee -a $R/time.txt
  done
done
DCSM_PREWARM=14 gpu_tests $(( 545 - $(el) )) \
    tests/gpu/test_oracle_gpu.py tests/gpu/test_input_ring_gpu.py tests/gpu/test_engine_gpu.py
grep -cE " PASSED" $R/tests/gpu-tests.log | sed 's/^/passed lines: /' | tee -a $R/time.txt
