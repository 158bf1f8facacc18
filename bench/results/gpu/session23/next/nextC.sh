#!/usr/bin/env bash
# Written in session 23 for a later one (not run): branch host-path, a whole piece written
# straight into the input ring. When a piece is admitted whole, no control record waits and
# the apply is not paced, encode_updates writes the records as int64 words into the ring's
# own slots (InputRing.room / commit): no records array, no copy. admit returns how many it
# admitted, so a whole piece needs no np.nonzero, and control records are merged only when
# some wait. On the development host (bench/debug/host_path_cost.py --vertices 40000
# --updates 28900, the ring's pages touched first in both scripts): the send path 14.3-15.2
# ns an update against main's 23.4 (branch host-path). Here: the branch's host
# path on the device's host beside main's (main's script does not touch the ring first, so
# its "ring" step also counts page faults), the oracle rows in turns with the Q_1
# timelines, and the branch's engine and oracle tests (host code only: main's kernel cache
# serves it).
# Prepare: the branch's tree as the working tree (git checkout host-path), main's in
#   .devrun/m (git archive main ':!bench/results' ':!docs' | tar x -C .devrun/m), the rest as
#   nextA.sh. Carry: .devrun .shdata
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.py dcsm/engine/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.py dcsm/engine/*.py) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
for t in m b; do
  src=$([ $t = m ] && echo .devrun/m || echo .)
  PYTHONPATH=/tmp/$t python3 -P $src/bench/debug/host_path_cost.py --vertices 40000 --updates 28900 > $R/host-path-$t.txt 2>&1
  PYTHONPATH=/tmp/$t python3 -P $src/bench/debug/host_path_cost.py > $R/host-path-43m-$t.txt 2>&1
  echo "host path $t: $(tail -1 $R/host-path-$t.txt) | at 4.8M vertices: $(tail -1 $R/host-path-43m-$t.txt)" | tee -a $R/time.txt
done
for run in "m 1" "b 1" "m 2" "b 2" "m 3" "b 3"; do
  set -- $run
  PYTHONPATH=/tmp/$1 timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$1-$2 --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$1-$2.log 2>&1
  echo "oracle $1 $2 rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$1-$2 | tee -a $R/time.txt
done
for t in m b; do
  PYTHONPATH=/tmp/$t timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 \
      --batch-cap 16384 > $R/apply-profile-$t.txt 2>&1
  echo "apply_profile $t rc $?: $(sed -n 2p $R/apply-profile-$t.txt)" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_SUITE_SECONDS=$(( 560 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
