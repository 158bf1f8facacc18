#!/usr/bin/env bash
# Call 1: the tails test, the whole GPU suite (reference data), then, time allowing, the
# 43M triangle scale-up row on the new code and on main.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-min/*.whl || exit 1
rm -rf /tmp/new /tmp/base
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/base .base-main >/dev/null 2>&1 || exit 1
git log --oneline -1 > $R/code.txt
NEW=/tmp/new:/tmp/site; BASE=/tmp/base:/tmp/site
PYTHONPATH=$NEW timeout -k 5 200 python3 -P -m pytest tests/gpu/test_engine_gpu.py -x -q -p no:cacheprovider \
    --confcutdir=tests/gpu -k tails 2>&1 | tee $R/tails.log
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
echo "tails done at $(el) s" | tee -a $R/time.txt
PYTHONPATH=$NEW DCSM_SHARED_DATA=.shdata DCSM_RESULTS=$R/gpu bash scripts/gpu-suite.sh --tests > /dev/null 2>&1
echo "suite rc $? at $(el) s" | tee -a $R/time.txt
tail -3 $R/gpu/gpu-tests.log
if [ $(el) -lt 390 ]; then
    PYTHONPATH=$NEW timeout 60 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
    echo "graph at $(el) s" | tee -a $R/time.txt
    for b in new base; do
        [ $(el) -lt 520 ] || break
        P=$NEW; S=.; [ $b = base ] && { P=$BASE; S=.base-main; }
        PYTHONPATH=$P timeout 60 python3 -P $S/bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle \
            --churn 1 --engine batch_cap=16384 --out $R/t43-$b.json > $R/t43-$b.log 2>&1
        echo "$b rc $? at $(el) s" | tee -a $R/time.txt
    done
fi
