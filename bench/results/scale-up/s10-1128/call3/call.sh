#!/usr/bin/env bash
# Call 3: TAIL_DIV 32 against the default 8 (call 2), the pool's headroom at 1.5, the
# 4-cycle without tails (TAIL_DIV 0: the layout's cost alone). New code only.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-min/*.whl || exit 1
rm -rf /tmp/new
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/new . >/dev/null 2>&1 || exit 1
git log --oneline -1 > $R/code.txt
export PYTHONPATH=/tmp/new:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph at $(el) s" | tee -a $R/time.txt
row() {  # name pattern limit defines patch extra...
    local name=$1 pat=$2 lim=$3 def=$4 patch=$5; shift 5
    DCSM_KERNEL_DEFINES="$def" PATCH="$patch" timeout $lim python3 -P .devrun/patch_run.py bench/scale_up_bench.py \
        --backend gpu --graph /tmp/g43.npz --patterns $pat "$@" --out $R/$name.json > $R/$name.log 2>&1
    echo "$name rc $? at $(el) s" | tee -a $R/time.txt
}
row tri-div32 triangle 80 -DTAIL_DIV=32 "" --engine batch_cap=16384
row tri-head15 triangle 80 "" "dcsm.gpu.pools:HEADROOM=1.5,dcsm.gpu.pools:LIVE_WATER=0.7" --engine batch_cap=16384
[ $(el) -lt 330 ] && row c4-div32 4cycle 115 -DTAIL_DIV=32 ""
[ $(el) -lt 290 ] && row c4-div0 4cycle 120 -DTAIL_DIV=0 ""
