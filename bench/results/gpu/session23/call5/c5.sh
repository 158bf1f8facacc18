#!/usr/bin/env bash
# Session 23, call 5: branch job-lines (the job words each on a 128-byte line of its own)
# against main 43ddb24 in turns: the oracle count rows (median of five, the updater's steps a
# batch), the response rows; the branch with idle warps polling 4x as often (VIEW_NS 2000).
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1 || exit 1
(cd .devrun/m && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1) || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files-b.md5; (cd .devrun/m && md5sum gpu/*.cu gpu/*.cuh gpu/*.py) > $R/files-m.md5
export DCSM_SHARED_DATA=$PWD/.shdata
for run in "m 1 -" "b 1 -" "m 2 -" "b 2 -" "m 3 -" "b 3 -" "b view2k -DVIEW_NS=2000" "m 4 -" "b 4 -"; do
  set -- $run; t=$1; name=$t-$2; defs=$3; [ "$defs" = "-" ] && defs=""
  [ $(el) -gt 200 ] && continue
  PYTHONPATH=/tmp/$t DCSM_KERNEL_DEFINES="$defs" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$name --data .shdata \
      --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$name.log 2>&1
  echo "oracle $name [$defs] rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$name | tee -a $R/time.txt
done
for t in m b; do
  PYTHONPATH=/tmp/$t timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency-$t --data .shdata --skip-search --sustain-updates 0 > $R/latency-$t.log 2>&1
  echo "latency $t rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency-$t/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
done
