#!/usr/bin/env bash
# Session 19 call 2 (main): the service on the GPU backend at and past its highest sustained
# rate, then twice that rate started fresh; the 20M Chung-Lu 4-clique under static_match.cu's
# knobs (.devrun/sweep4.py); GPU chaos with each start's seconds printed, if time is left.
# Carry: .devrun .whl
source .devrun/common-nowhl.sh
cp .devrun/s19c2.sh .devrun/sweep4.py $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py dcsm/*.py loadgen/*.py > $R/files.md5
timeout -k 5 170 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 3 --timeout 150 \
    --tag sweep 1000000,2000000,3000000 -- --drain-s 30 --vertices 200000 --producers auto > $R/svc-sweep.log 2>&1
echo "service sweep rc $? at $(el) s" | tee -a $R/time.txt
python3 - $R/svc/sweep/results.json <<'PY' 2>&1 | tee -a $R/time.txt
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["results"]:
    print(f" {s['target_rate']:>10,.0f} sent {s['send_rate']:>12,.0f} processed {s['throughput']:>12,.0f} "
          f"{s['processed']:,}/{s['updates']:,} p50/p99 {s['e2e_kafka_ms']['p50']:.1f}/{s['e2e_kafka_ms']['p99']:.1f} ms "
          f"producers {s['producers']} sustained {s['sustained']}")
print(" max_sustained_rate", r["max_sustained_rate"])
PY
S=$(python3 -c "import json; print(int(json.load(open('$R/svc/sweep/results.json'))['max_sustained_rate'] or 0))" 2>/dev/null || echo 0)
if [ "$S" -gt 0 ]; then
  timeout -k 5 170 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 5 --timeout 150 \
      --tag twice $(( 2 * S )) -- --drain-s 60 --vertices 200000 --producers auto > $R/svc-twice.log 2>&1
  echo "service at twice $S rc $? at $(el) s" | tee -a $R/time.txt
  python3 -c "
import json; r=json.load(open('$R/svc/twice/results.json'))['results'][0]
print(' sent', round(r['send_rate']), 'processed', round(r['throughput']), r['processed'], 'of', r['updates'], 'drained', round(r['drained_after_send_s'],1), 's p99', round(r['e2e_kafka_ms']['p99']), 'ms rss', round(r['rss_bytes']/1e6), 'MB')" 2>&1 | tee -a $R/time.txt
fi
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m:/tmp/site:$PWD
C=";-DCOUNT4_MIN_BLOCKS=4;-DCOUNT4_MIN_BLOCKS=2;-DSEARCH_WAYS=4;-DCLAIM_MAX=16;-DPAIRS_MAX_LIST=64;-DPAIRS_MAX_LIST=256"
timeout -k 5 $(( 480 - $(el) )) python3 -P .devrun/sweep4.py "$C" clique4 > $R/sweep4.log 2>&1
echo "clique4 sweep rc $? at $(el) s" | tee -a $R/time.txt; cat $R/sweep4.log | tee -a $R/time.txt
left=$(( 560 - $(el) ))
[ $left -gt 120 ] && { timeout -k 5 $left python3 -P bench/chaos.py --kills 3 --updates 8000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
  echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^start|differences" $R/chaos-gpu.log | tee -a $R/time.txt; }
