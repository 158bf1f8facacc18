#!/usr/bin/env bash
# Session 23, call 6: the final code (main 517023b): the whole GPU suite (tests/gpu, the
# kernel cache filled first by 12 prewarm shards: the job words moved, so every persistent
# kernel config is built anew), the oracle count rows beside RapidFlow (median of five), the
# response rows.
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py dcsm/engine/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
DCSM_PREWARM=12 DCSM_RESULTS=$R/suite timeout -k 5 470 bash scripts/gpu-suite.sh --tests tests/gpu > $R/suite.log 2>&1
echo "GPU suite rc $? at $(el) s: $(tail -1 $R/suite/gpu-tests.log)" | tee -a $R/time.txt
timeout -k 5 $(( 560 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; python3 .devrun/summ.py $R/oracle-rf | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
timeout -k 5 $(( 590 - $(el) )) python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search --sustain-updates 0 > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
