#!/usr/bin/env bash
# Session 34, call 2, on main (host_threads -1 by default: 4 threads on this 16-core host).
# The service on the GPU backend, in turns: default (a) against DCSM_HOST_THREADS=0 (z), at
# 1M, 1.5M and 2M/s; then the GPU test files call 1 did not run (static, input ring, long
# run), and chaos (SIGKILL x3) on the GPU backend in the time left. (The tree, 41 MB, and the
# wheels, 23 MB, left no room under the 64 MiB carry for the kernel cache or py-spy.)
# Carry: .dev28/common.sh .whlS (.whl less the wheels the device image has)
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session34/call2/c2.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py dcsm/*.py loadgen/*.py > $R/files.md5
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
PYTHONPATH=/tmp/m python3 -P -c "
import numba, numpy as np
from numba import njit, prange
@njit(parallel=True)
def f(x):
    for i in prange(x.shape[0]): x[i] += 1
f(np.zeros(100)); print('numba', numba.__version__, 'threading layer', numba.threading_layer(), 'threads', numba.config.NUMBA_NUM_THREADS)" 2>&1 | tee -a $R/time.txt
summ() { python3 - $1 <<'PY' 2>&1 | tee -a $R/time.txt
import json, sys
r = json.load(open(sys.argv[1]))
for s in r["results"]:
    print(f" {s['target_rate']:>10,.0f} sent {s['send_rate']:>12,.0f} processed {s['throughput']:>12,.0f} "
          f"{s['processed']:,}/{s['updates']:,} p50/p99 {s['e2e_kafka_ms']['p50']:.1f}/{s['e2e_kafka_ms']['p99']:.1f} ms "
          f"sustained {s['sustained']}")
PY
}
for turn in a1 z1 a2 z2; do
  [ $(el) -gt 300 ] && break
  T=$([ ${turn:0:1} = a ] && echo "" || echo 0)
  DCSM_HOST_THREADS=$T timeout -k 5 140 bash scripts/service-bench.sh --whl .whlS --out $R/svc --backend gpu --no-pyspy --duration 3 \
      --timeout 130 --tag $turn 1000000,1500000,2000000 -- --drain-s 30 --vertices 200000 --producers auto > $R/svc-$turn.log 2>&1
  echo "service $turn (DCSM_HOST_THREADS='$T') rc $? at $(el) s" | tee -a $R/time.txt
  summ $R/svc/$turn/results.json
done
left=$(( 500 - $(el) ))
[ $left -gt 60 ] && { PYTHONPATH=/tmp/m DCSM_PREWARM=8 DCSM_SUITE_SECONDS=$left DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_gpu_static.py tests/gpu/test_input_ring_gpu.py tests/gpu/test_long_run.py > $R/tests.log 2>&1
  echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
  grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whlS/*.whl >/dev/null 2>&1
left=$(( 570 - $(el) ))
[ $left -gt 70 ] && { PYTHONPATH=/tmp/m:/tmp/site timeout -k 5 $left python3 -P bench/chaos.py --kills 3 --updates 8000 --seed 2 \
    --signal kill --backend gpu --out $R/chaos-gpu-kill > $R/chaos-gpu-kill.log 2>&1
  echo "chaos kill x3 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^chaos|differences|duplicate|lost|invented" $R/chaos-gpu-kill.log | tail -6 | tee -a $R/time.txt; }
