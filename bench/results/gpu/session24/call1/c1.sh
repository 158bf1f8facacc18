#!/usr/bin/env bash
# Session 24 call 1: branch combo (main 89e6603 + host-path + fuse-scan) against main:
# oracle rows in turns (m, c, c with both fuse knobs 0 = host-path alone), host path cost,
# Q_1 apply profile, then the branch's engine and oracle tests.
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py dcsm/engine/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py dcsm/engine/*.py) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
for t in m b; do
  src=$([ $t = m ] && echo .devrun/m || echo .)
  PYTHONPATH=/tmp/$t python3 -P $src/bench/debug/host_path_cost.py --vertices 40000 --updates 28900 > $R/host-path-$t.txt 2>&1
  echo "host path $t: $(tail -1 $R/host-path-$t.txt)" | tee -a $R/time.txt
done
for run in "m 1 -" "b 1 -" "b off1 -DFUSE_HALVES_COUNT=0+-DFUSE_ALLOC_SCAN=0" "m 2 -" "b 2 -" "b off2 -DFUSE_HALVES_COUNT=0+-DFUSE_ALLOC_SCAN=0" "m 3 -" "b 3 -"; do
  set -- $run; defs=${3//+/ }; [ "$defs" = "-" ] && defs=""
  PYTHONPATH=/tmp/$1 DCSM_KERNEL_DEFINES="$defs" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$1-$2 \
      --data .shdata --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$1-$2.log 2>&1
  echo "oracle $1 $2 [$defs] rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$1-$2 | tee -a $R/time.txt
done
for t in m b; do
  PYTHONPATH=/tmp/$t timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 \
      --batch-cap 16384 > $R/apply-profile-$t.txt 2>&1
  echo "apply_profile $t rc $?: $(sed -n 2p $R/apply-profile-$t.txt)" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_PREWARM=12 DCSM_SUITE_SECONDS=$(( 565 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
