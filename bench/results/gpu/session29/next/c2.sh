#!/usr/bin/env bash
# Written in session 29 for the next one (not run): the light rows' batch count. In session
# 28's Q_1 deletion10 timeline the batches were 4,096, 8,192, 16,384 (the cap) and 228, the
# last costing 0.16 ms of 1.88; and the third batch's records were taken over 0.21 ms, the
# second's 8,192 in 0.03 ms (bench/results/gpu/NOTES.md, the twenty-ninth session's leads).
#  1. bench/debug/apply_profile.py at batch caps 16,384 (the default), 20,480, 24,576 and
#     32,768 for Q_1 deletion10 and Q_10 insertion10: the batches, when each was taken,
#     started and finished, and the updater's steps (input_run / input_read say how the
#     third batch was read: all updater warps, or warp 0 alone);
#  2. the oracle count rows in turns, the default cap (d) against 24,576 (c):
#     python3 bench/debug/compare_turns.py $R d1 c1 d2 c2 d3 c3.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz .dev28/summ.py
source .dev28/common.sh
cp bench/results/gpu/session29/next/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for row in "Q_1 deletion10" "Q_10 insertion10"; do
  set -- $row
  timeout -k 5 150 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 \
      --batch-cap 16384 20480 24576 32768 > $R/prof-$1-$2.txt 2>&1
  echo "apply_profile $1 $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^== |^apply:" $R/prof-$1-$2.txt | tee -a $R/time.txt
done
for turn in d1 c1 d2 c2 d3 c3; do
  [ $(el) -gt 540 ] && break
  cap=""; [ ${turn:0:1} = c ] && cap="--batch-cap 24576"
  timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd --oracle-count-only --skip-latency \
      --repeat 5 $cap > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
