#!/usr/bin/env bash
# Session 33, call 2, on main: the service on the GPU backend, which sessions 31 and 32 did
# not run. loadgen --embedded, tansu and `dcsm serve --backend gpu` at 1M, 1.5M and 2M/s, then
# at twice the highest sustained rate; chaos on the GPU backend with 3 SIGKILLs and with 5
# SIGTERMs (every difference counted after dedupe, and the duplicates a graceful stop left);
# then the GPU test files that sessions 31-32 did not run (static, long run), in the time left.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .whl
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session33/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py dcsm/*.py loadgen/*.py > $R/files.md5
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
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
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
for sig in kill term; do
  left=$(( 470 - $(el) ))
  [ $left -gt 60 ] || break
  k=$([ $sig = kill ] && echo 3 || echo 5)
  PYTHONPATH=/tmp/m:/tmp/site timeout -k 5 $left python3 -P bench/chaos.py --kills $k --updates 8000 --seed 1 --signal $sig \
      --backend gpu --out $R/chaos-gpu-$sig > $R/chaos-gpu-$sig.log 2>&1
  echo "chaos $sig x$k rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^chaos|^start|differences|duplicate|lost|invented" $R/chaos-gpu-$sig.log | tail -12 | tee -a $R/time.txt
done
left=$(( 560 - $(el) ))
[ $left -gt 60 ] && { PYTHONPATH=/tmp/m DCSM_SUITE_SECONDS=$left DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_gpu_static.py tests/gpu/test_long_run.py > $R/tests.log 2>&1
  echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
  grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt; }
