#!/usr/bin/env bash
# Session 19 call 4: the final code of the session (compact-not-grow merged, static_count4
# capped at 4 blocks an SM):
#  1. the whole GPU suite (tests/gpu), its kernel cache session 18's calls 1/4's (every suite
#     config of the persistent kernel, unchanged since; the static module's configs are
#     rebuilt by the prewarm shards);
#  2. the oracle count rows (counts against the published ones) and the response rows.
# Carry: .devrun .whl-gpu .shdata/oracle-github .shdata/citeseer
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s19c4.sh $R/; nvidia-smi -L > $R/device.txt
md5sum gpu/*.cu gpu/*.cuh gpu/*.py service/*.py dcsm/*.py > $R/files.md5  # what this call ran
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
DCSM_PREWARM=12 DCSM_RESULTS=$R/suite timeout -k 5 440 bash scripts/gpu-suite.sh --tests tests/gpu > $R/suite.log 2>&1
echo "GPU suite rc $? at $(el) s: $(tail -1 $R/suite/gpu-tests.log)" | tee -a $R/time.txt
[ $(el) -lt 500 ] && { timeout -k 5 $(( 530 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle --data .shdata --oracle-count-only --skip-latency > $R/oracle.log 2>&1
  echo "oracle rows rc $? at $(el) s" | tee -a $R/time.txt
  python3 -c "import json; r=[x for x in json.load(open('$R/oracle/gpu_bench.json'))['search'] if x['query']!='all at once']; print(len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's, equal to the published:', sum(x.get('peer_matches')==x['matches'] for x in r))" 2>&1 | tee -a $R/time.txt; }
[ $(el) -lt 520 ] && { timeout -k 5 $(( 565 - $(el) )) python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search --sustain-updates 0 > $R/latency.log 2>&1
  echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt; }
