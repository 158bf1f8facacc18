#!/usr/bin/env bash
# Session 33, call 3, from a checkout of branch host-threads: an apply's id lookups and
# encoding spread over numba threads ($DCSM_HOST_THREADS). Session 31 measured them alone
# on this kind of host (lookups 12.4 -> 10.2 us a piece at 8 threads, encoding 18.1 -> 13.1
# at 16, in the engine 47 and 32 us) and left them as "at most ~0.1 ms a light row"; but a
# host that writes faster lets the device take fewer, larger batches, and the batch count
# decides a light row (session31/README.md). In turns m (0, main's behaviour), p (8) and
# q (4) on the 22 oracle count rows; host timelines of Q_1 deletion10 and Q_7 insertion10
# for m and p; the faster of m and p beside RapidFlow; the engine and oracle GPU tests with
# p's threads.
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session33/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
python3 -c "import numba; print('numba', numba.__version__, 'threads', numba.config.NUMBA_NUM_THREADS)" > $R/numba.txt 2>&1
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
threads() { case ${1:0:1} in m) echo 0;; p) echo 8;; q) echo 4;; esac; }
mkdir -p $R/turns
for turn in m1 p1 q1 q2 p2 m2 m3 p3 q3 q4 p4 m4; do
  [ $(el) -gt 150 ] && break
  DCSM_HOST_THREADS=$(threads $turn) timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mpq][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for t in $R/turns/[mpq][0-9]; do python3 .dev28/summ.py $t 2>/dev/null | head -1 | sed "s|^|$(basename $t) |"; done | tee -a $R/time.txt
for v in m p; do
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    set -- $row
    DCSM_HOST_THREADS=$(threads $v) timeout -k 5 40 python3 -P bench/debug/apply_profile.py \
        --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-70); $(grep -E '^timed call' $R/prof-$v-$1-$2.txt)" | tee -a $R/time.txt
  done
done
best=$(python3 - $R/turns <<'PY'
import json, statistics, sys, pathlib
tot = {}
for d in pathlib.Path(sys.argv[1]).iterdir():
    if d.is_dir() and (d / "gpu_bench.json").exists():
        j = json.load(open(d / "gpu_bench.json"))
        tot.setdefault(d.name[0], []).append(sum(x["seconds"] for x in j["search"]))
med = {k: statistics.median(v) for k, v in tot.items()}
print(min(med, key=med.get))
PY
)
echo "faster by the median of its turns: $best" | tee -a $R/time.txt
DCSM_HOST_THREADS=$(threads $best) timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "$best beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf 2>/dev/null | head -1 | tee -a $R/time.txt
DCSM_HOST_THREADS=8 DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 545 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests (8 host threads) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
