#!/usr/bin/env bash
# Session 23, call 2: branch run-after-control (a run read by every updater warp may begin
# behind a control record; the host publishes a piece's tail after the next admission)
# against main in turns on the oracle count rows; the branch with batch_cap 32768 and with
# n_updaters 7; the Q_1 timeline; the branch's tests of runs and registrations.
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
summ() { python3 -c "import json; r=[x for x in json.load(open('$1/gpu_bench.json'))['search'] if x['query']!='all at once']; print('  ', len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's; equal', sum(x.get('equal_to_published') in (True,'yes') for x in r), '; Q_1/Q_5/Q_7/Q_10 ins ms:', [round(1e3*x['seconds'],2) for x in r if x['query'] in ('Q_1','Q_5','Q_7','Q_10') and x['stream']=='insertion10'])" 2>&1; }
for run in "m 1" "b 1" "m 2" "b 2" "b cap32k batch_cap=32768 maxu=65536" "b nu7 n_updaters=7" "m 3" "b 3"; do
  set -- $run; t=$1; name=$2; shift 2
  [ $(el) -gt 240 ] && continue
  PYTHONPATH=/tmp/$t timeout -k 5 90 python3 -P .devrun/knob.py "$@" -- --out $R/oracle-$t-$name --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$t-$name.log 2>&1
  echo "oracle $t $name rc $? at $(el) s" | tee -a $R/time.txt; summ $R/oracle-$t-$name | tee -a $R/time.txt
done
for t in m b; do
  PYTHONPATH=/tmp/$t timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 --batch-cap 16384 \
      > $R/apply-profile-$t.txt 2>&1
  echo "apply_profile $t rc $? at $(el) s: $(sed -n 2p $R/apply-profile-$t.txt)" | tee -a $R/time.txt
done
PYTHONPATH=/tmp/b DCSM_RESULTS=$R/tests timeout -k 5 $(( 580 - $(el) )) python3 -P -m pytest -q -p no:cacheprovider tests/gpu/test_engine_gpu.py \
    -k "long_runs or register or stop_and_relaunch or oracle" --confcutdir=tests/gpu tests/gpu/test_oracle_gpu.py > $R/tests-b.log 2>&1
echo "branch tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
