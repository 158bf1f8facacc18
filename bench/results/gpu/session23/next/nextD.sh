#!/usr/bin/env bash
# Written in session 23 for a later one (not run): branch fuse-scan. With FUSE_ALLOC_SCAN 1
# (the branch's default), a batch with no dead entry to compact (ncompact 0: insertions into
# lists without deletions) has J_ALLOC set each new version's length, and J_SCAN is not run:
# one job, ~13-15 us, fewer a batch (bench/results/gpu/session23/README.md, call 4-5 step
# tables). Deletion batches keep J_SCAN. A review of the job dependencies (session 23) found
# three more barriers that could go: J_HALVES with J_SEGCOUNT (a per-vertex counter instead
# of vmark), the in-place deletions and chunkseg in J_SEGINFO (then J_MASK joins J_ALLOC's
# job), and J_CLASSIFY per segment inside J_SEGINFO; none is built.
# Here: the branch's engine test file (self-checks on in most tests: J_VERIFY checks every
# new version's length and entries), then the oracle rows against main in turns, the
# updater's steps printed.
# Prepare: the branch as the working tree (git checkout fuse-scan), main in .devrun/m (git
#   archive main ':!bench/results' ':!docs' | tar x -C .devrun/m), the rest as nextA.sh.
# Carry: .devrun .shdata
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
PYTHONPATH=/tmp/b DCSM_PREWARM=12 DCSM_SUITE_SECONDS=420 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
for run in "m 1" "b 1" "m 2" "b 2"; do
  set -- $run; [ $(el) -gt 540 ] && continue
  PYTHONPATH=/tmp/$1 timeout -k 5 30 python3 -P bench/gpu_bench.py --out $R/oracle-$1-$2 --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$1-$2.log 2>&1
  echo "oracle $1 $2 rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$1-$2 | tee -a $R/time.txt
done
