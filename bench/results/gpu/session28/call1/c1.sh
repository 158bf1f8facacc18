#!/usr/bin/env bash
# Session 28 call 1 (main 488547b, the engine of 1c085dc plus sessions 26-27's service
# changes): the oracle rows beside RapidFlow's median first; the service on the GPU backend
# (sweep 1M/1.5M/2M, then twice the highest sustained rate); the three engine tests no
# device has run on the final kernel. Carry: .dev28 .whl .peers/bin/RapidFlow.out
source .dev28/common.sh
cp .dev28/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m timeout -k 5 120 python3 -P bench/gpu_bench.py --out $R/oracle-rf --data /tmp/shd --oracle-count-only \
    --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow's median rc $? at $(el) s" | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
python3 .dev28/summ.py $R/oracle-rf | tee -a $R/time.txt
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
timeout -k 5 100 bash scripts/service-bench.sh --whl .whl --out $R/svc --backend gpu --no-pyspy --duration 5 --timeout 95 \
    --tag twice $(( 2 * S )) -- --drain-s 60 --vertices 200000 --producers auto > $R/svc-twice.log 2>&1
echo "service at twice $S rc $? at $(el) s" | tee -a $R/time.txt
python3 -c "
import json; r=json.load(open('$R/svc/twice/results.json'))['results'][0]
print(' sent', round(r['send_rate']), 'processed', round(r['throughput']), r['processed'], 'of', r['updates'], 'drained', round(r['drained_after_send_s'],1), 's p50/p99', round(r['e2e_kafka_ms']['p50']), round(r['e2e_kafka_ms']['p99']), 'ms rss', round(r['rss_bytes']/1e6), 'MB')" 2>&1 | tee -a $R/time.txt
DCSM_SUITE_SECONDS=$(( 575 - $(el) )) DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py \
    -k "tails_appended_and_merged and 8 or update_slots_wait or larger_than_pool" > $R/tests.log 2>&1
echo "the engine tests not yet run on the final kernel: rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
