#!/usr/bin/env bash
# Session 30, call 4 (main: the short-write mirror copy and done-lines merged): first on the
# machine the oracle count rows beside RapidFlow's median (same host, same call); then the
# service on the GPU backend (loadgen --embedded, tansu, dcsm serve --backend gpu) at 1M,
# 1.5M and 2M/s and at twice its highest sustained rate, then chaos on the GPU backend
# (SIGKILLs, every difference counted after dedupe): done-lines changed how completions
# reach the host, which the service reads.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz .whl .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session30/call4/c4.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py dcsm/*.py loadgen/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m timeout -k 5 150 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | head -1 | tee -a $R/time.txt
timeout -k 5 150 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 3 --timeout 140 \
    --tag sweep 1000000,1500000,2000000 -- --drain-s 30 --vertices 200000 --producers auto > $R/svc-sweep.log 2>&1
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
[ "$S" -gt 0 ] || S=1000000
timeout -k 5 110 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 5 --timeout 105 \
    --tag twice $(( 2 * S )) -- --drain-s 60 --vertices 200000 --producers auto > $R/svc-twice.log 2>&1
echo "service at twice $S rc $? at $(el) s" | tee -a $R/time.txt
python3 -c "
import json; r=json.load(open('$R/svc/twice/results.json'))['results'][0]
print(' sent', round(r['send_rate']), 'processed', round(r['throughput']), r['processed'], 'of', r['updates'], 'drained', round(r['drained_after_send_s'],1), 's p50/p99', round(r['e2e_kafka_ms']['p50']), round(r['e2e_kafka_ms']['p99']), 'ms rss', round(r['rss_bytes']/1e6), 'MB')" 2>&1 | tee -a $R/time.txt
[ -d /tmp/m ] || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/m:/tmp/site
left=$(( 560 - $(el) ))
[ $left -gt 90 ] && { timeout -k 5 $left python3 -P bench/chaos.py --kills 3 --updates 8000 --seed 1 --backend gpu --out $R/chaos-gpu > $R/chaos-gpu.log 2>&1
  echo "chaos rc $? at $(el) s" | tee -a $R/time.txt; grep -E "^start|differences|lost|invented" $R/chaos-gpu.log | tail -8 | tee -a $R/time.txt; }
