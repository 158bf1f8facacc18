#!/usr/bin/env bash
# Written in the sixteenth session for the next one: the light oracle rows (issue 13: 11
# of 22 slower than RapidFlow). A light row's batch of ~5,800 records spends ~123 us of
# ~550 reading its records (step_input_read, session 16 call 3): warp 0 reads 32 x
# RING_WIDE records a round trip from the input mirror.
#  1. The oracle count rows, RING_WIDE 8 against 4 (main's), in turns (8: read_wide spills
#     604/640 B; a fenced knob since 1097ed0, never run at 8 on a device);
#  2. bench/debug/apply_profile.py on Q_1 insertion10 (main): per batch the updater took,
#     its size, when it was taken, its first start and last finish; the host's writes.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/nextP3.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
for run in "default 1" "-DRING_WIDE=8 1" "default 2" "-DRING_WIDE=8 2" "default 3" "-DRING_WIDE=8 3"; do
  set -- $run; d=$([ $1 = default ] || echo $1); tag=$(echo "$1" | tr -d '=-')-$2
  [ $(el) -gt 420 ] && break
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$tag --data .shdata \
      --oracle-count-only --skip-latency > $R/oracle-$tag.log 2>&1
  echo "oracle '$d' $2 rc $? at $(el) s" | tee -a $R/time.txt
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); u=j['updater'][0]; print('22 rows', round(sum(r['seconds'] for r in j['search'] if r['query'] != 'all at once'), 4), 'input read us/batch', round(u['step_input_read_us'], 1), 'batches', u['batches'])" $R/oracle-$tag/gpu_bench.json | tee -a $R/time.txt
done
[ $(el) -lt 480 ] && { timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 \
    --batch-cap 16384 > $R/apply-profile-Q_1.txt 2>&1; echo "apply_profile rc $? at $(el) s" | tee -a $R/time.txt; }
