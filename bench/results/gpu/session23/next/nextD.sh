#!/usr/bin/env bash
# Written in session 23 for a later one (not run): branch fuse-scan, two jobs fewer a batch,
# each behind a knob (layout.cuh; both 1 on the branch, compiled here only):
#  - FUSE_HALVES_COUNT: J_HALVES counts each vertex's half edges in vmark as it claims the
#    vertices, so J_SEGCOUNT is not run (J_PLACE looks the segments up, J_SEGSTART reads
#    the counts and resets vmark): every bulk batch;
#  - FUSE_ALLOC_SCAN: with no dead entry to compact (ncompact 0: insertions into lists
#    without deletions), J_ALLOC sets each new version's length and J_SCAN is not run.
# A job costs ~13-15 us a batch whatever its work (session23/README.md, calls 4-5). The
# review of the job dependencies (session 23) found two more barriers that could go: the
# in-place deletions and chunkseg in J_SEGINFO (then J_MASK joins J_ALLOC's job), and
# J_CLASSIFY per segment inside J_SEGINFO; neither is built.
# Here: the branch's engine test file and oracle tests (self-checks on in most tests:
# J_VERIFY checks every new version's length and entries; CHK_SEGMENT each half edge's
# segment), then the oracle rows in turns: main, the branch, the branch with both knobs 0.
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
for run in "m 1 -" "b 1 -" "b off -DFUSE_HALVES_COUNT=0+-DFUSE_ALLOC_SCAN=0" "m 2 -" "b 2 -"; do
  set -- $run; defs=${3//+/ }; [ "$defs" = "-" ] && defs=""; [ $(el) -gt 540 ] && continue
  PYTHONPATH=/tmp/$1 DCSM_KERNEL_DEFINES="$defs" timeout -k 5 45 python3 -P bench/gpu_bench.py --out $R/oracle-$1-$2 \
      --data .shdata --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$1-$2.log 2>&1
  echo "oracle $1 $2 [$defs] rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$1-$2 | tee -a $R/time.txt
done
