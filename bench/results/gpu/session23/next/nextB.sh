#!/usr/bin/env bash
# Written in session 23 for a later one (not run): why faster jobs made the light insertion
# rows slower. In call 5, with the job words on lines of their own, VIEW_NS 2000 (idle warps
# refresh their block's view of the job 4x as often) cut every job by 25-40 % (J_HALVES
# 27.8 -> 17.8 us a batch, J_SEGCOUNT 14.3 -> 10.5), but the batches shrank (mean 4,999
# against 7,200-8,300 updates), and the light insertion rows took 2.95-2.98 ms against
# 2.28-2.59 (deletion rows level, 1.95-2.05 ms). The same in turns, VIEW_NS 8000 (default),
# 4000 and 2000, with the Q_1 insertion and deletion timelines at each (batches: sizes,
# when taken, first match).
# Prepare and carry as nextA.sh (RapidFlow not needed: .devrun .shdata).
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
for turn in 1 2; do
  for v in 8000 4000 2000; do
    DCSM_KERNEL_DEFINES="-DVIEW_NS=$v" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$v-$turn --data .shdata \
        --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$v-$turn.log 2>&1
    echo "VIEW_NS $v turn $turn rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-$v-$turn | tee -a $R/time.txt
  done
done
for v in 8000 2000; do
  for s in insertion10 deletion10; do
    DCSM_KERNEL_DEFINES="-DVIEW_NS=$v" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream $s \
        --batch-cap 16384 > $R/apply-profile-$v-$s.txt 2>&1
    echo "apply_profile VIEW_NS $v $s rc $?: $(sed -n 2p $R/apply-profile-$v-$s.txt)" | tee -a $R/time.txt
  done
done
