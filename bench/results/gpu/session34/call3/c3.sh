#!/usr/bin/env bash
# Session 34, call 3, on main (the embeddings-mode decode to internal ids, external ids looked
# up by the ordering pass's threads). First the engine and oracle GPU tests (the decode is
# on their path); then the search rows, oracle-github and enron labelled, count and
# embedding (--skip-unlabeled --skip-latency --repeat 3): o = the commit before (from
# .dev28/old.tar.xz, `git archive HEAD~1`), n = main, then main beside RapidFlow (n2).
# Carry: .dev28/common.sh .dev28/summ.py .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa .dev28/old.tar.xz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session34/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m /tmp/m0 /tmp/old; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
mkdir -p /tmp/old && tar xJf .dev28/old.tar.xz -C /tmp/old && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m0 /tmp/old >/dev/null 2>&1 || echo "old install failed" | tee -a $R/time.txt
export DCSM_SHARED_DATA=/tmp/shd
PYTHONPATH=/tmp/m DCSM_PREWARM=12 DCSM_SUITE_SECONDS=230 DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests \
    tests/gpu/test_engine_gpu.py tests/gpu/test_oracle_gpu.py > $R/tests.log 2>&1
echo "GPU tests rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
for t in o n; do
  [ $(el) -gt 400 ] && break
  PYTHONPATH=$([ $t = o ] && echo /tmp/m0 || echo /tmp/m) timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/$t --data /tmp/shd \
      --skip-unlabeled --skip-latency --repeat 3 > $R/$t.log 2>&1
  echo "search rows $t rc $? at $(el) s" | tee -a $R/time.txt
done
python3 - $R/o $R/n <<'PY' 2>&1 | tee -a $R/time.txt
import json, sys
runs = [{(x["dataset"], x["query"], x["stream"], x["mode"]): x for x in json.load(open(d + "/gpu_bench.json"))["search"]} for d in sys.argv[1:]]
for mode in ("count", "embedding"):
    for ds in ("oracle-github", "enron-labeled5"):
        ks = [k for k in runs[0] if k[0] == ds and k[3] == mode and k[1] != "all at once" and all(k in r for r in runs)]
        tot = [sum(r[k]["seconds"] for k in ks) for r in runs]
        eq = all(runs[0][k]["matches"] == r[k]["matches"] for k in ks for r in runs)
        print(f" {ds} {mode}: {len(ks)} rows, o {tot[0]:.4f} s, n {tot[1]:.4f} s, n/o {tot[1] / tot[0]:.3f}, counts equal {eq}")
PY
left=$(( 560 - $(el) ))
[ $left -gt 50 ] && { PYTHONPATH=/tmp/m timeout -k 5 $left python3 -P bench/gpu_bench.py --out $R/n2 --data /tmp/shd --skip-unlabeled \
    --skip-latency --repeat 3 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/n2.log 2>&1
  echo "main beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt
  grep -A5 "^| dataset | mode" $R/n2/gpu_bench.md | tail -5 | tee -a $R/time.txt; }
