#!/usr/bin/env bash
# Session 37, call 2. (1) Page faults: the light rows run in two modes (call 1: Q_1
# deletion10 1.51-1.64 ms in some rows, 1.92-2.19 in others, stable over a row's five
# repeats); first touches of fresh memory cost ~2 us a page. Turns of main (m) against main
# with glibc keeping freed memory (M: no trim, no mmap below 256 MiB), gpu_bench rows now
# record each timed apply's page faults; apply_profile prints them too. (2) The engine and
# oracle GPU tests with -DFIND_ONE_PATH=1 -DCOPY_ONE_PATH=1 (call 1: c 183.29 ms against
# m 187.71 in turns, race hunt with all three 0 of 12 wrong).
# Carry: .dev28/common.sh .dev28/shd.tar.xz
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session37/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
malloc() { MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_TOP_PAD_=67108864 "$@"; }
(cat /sys/kernel/mm/transparent_hugepage/enabled; nproc; lscpu | grep -E "Model name|NUMA|Socket") > $R/host.txt 2>&1
mkdir -p $R/turns
for turn in m1 M1 m2 M2 m3 M3; do
  [ $(el) -gt 150 ] && break
  run=; [ ${turn:0:1} = M ] && run=malloc
  $run timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mM][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
python3 - $R/turns <<'PY' | tee -a $R/time.txt
import json, sys, pathlib
for d in sorted(pathlib.Path(sys.argv[1]).glob("[mM][0-9]")):
    for r in json.loads((d / "gpu_bench.json").read_text())["search"]:
        if r["query"] in ("Q_1", "Q_10"):
            print(d.name, r["query"], r["stream"], [round(s * 1e3, 2) for s in r["seconds_each"]], r.get("page_faults_each"))
PY
for v in m M; do for row in "Q_1 deletion10" "Q_7 insertion10"; do
  set -- $row; run=; [ $v = M ] && run=malloc
  $run timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 > $R/prof$v-$1-$2.txt 2>&1
  echo "apply_profile ($v) $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|^host totals" $R/prof$v-$1-$2.txt | cut -c1-400 | tee -a $R/time.txt
done; done
DEFS="-DFIND_ONE_PATH=1 -DCOPY_ONE_PATH=1"; echo "DEFS=$DEFS" > $R/defs.txt
DCSM_KERNEL_DEFINES="$DEFS" DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 575 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests ($DEFS) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
