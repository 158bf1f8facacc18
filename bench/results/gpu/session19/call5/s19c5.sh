#!/usr/bin/env bash
# Session 19 call 5: where the service on the GPU backend spends its time at twice its
# sustained rate (call 2: 2M/s offered, 1.59M/s processed, its main thread at 0.82 of a
# core): scripts/service-bench.sh with py-spy (non-blocking) at 2M/s, for the next session.
# Carry: .devrun   (.devrun/whl: .whl's wheels and py-spy's)
source .devrun/common-nowhl.sh
cp .devrun/s19c5.sh $R/; nvidia-smi -L > $R/device.txt
md5sum service/*.py gpu/*.py > $R/files.md5
NO_CACHE_BACK=1
timeout -k 5 200 bash scripts/service-bench.sh --whl .devrun/whl --out $R/svc --backend gpu --duration 4 --timeout 170 \
    --pyspy-args "--nonblocking" --tag profile 2000000 -- --drain-s 30 --vertices 200000 --producers auto > $R/svc.log 2>&1
echo "service-bench with py-spy rc $? at $(el) s" | tee -a $R/time.txt
python3 -c "
import json; r=json.load(open('$R/svc/profile/results.json'))['results'][0]
print(' sent', round(r['send_rate']), 'processed', round(r['throughput']), r['processed'], 'of', r['updates'])" 2>&1 | tee -a $R/time.txt
sort -t$'\t' -k6 -nr $R/svc/profile/cpu-steps.tsv | head -8 | tee -a $R/time.txt
ls $R/svc/profile | tee -a $R/time.txt
