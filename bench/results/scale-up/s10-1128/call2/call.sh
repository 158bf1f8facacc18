#!/usr/bin/env bash
# Call 2: the 43M rows, tails (new) beside main (base), each count checked by the bench:
# triangle insertion + deletion, 4-cycle insertion; then the oracle-github count total.
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
nvidia-smi --query-gpu=name --format=csv,noheader > $R/device.txt
NEW=/tmp/new:/tmp/site; BASE=/tmp/base:/tmp/site
PYTHONPATH=$NEW timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
echo "graph at $(el) s" | tee -a $R/time.txt
row() {  # build pattern limit extra...
    local b=$1 pat=$2 lim=$3; shift 3
    local P=$NEW S=.; [ $b = base ] && { P=$BASE; S=.base-main; }
    PYTHONPATH=$P timeout $lim python3 -P $S/bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $pat \
        "$@" --out $R/$pat-$b.json > $R/$pat-$b.log 2>&1
    echo "$pat $b rc $? at $(el) s" | tee -a $R/time.txt
}
row new triangle 90 --churn 1 --engine batch_cap=16384
row base triangle 90 --churn 1 --engine batch_cap=16384
[ $(el) -lt 330 ] && row new 4cycle 120
for b in new base; do
    [ $(el) -lt 480 ] || break
    P=$NEW S=.; [ $b = base ] && { P=$BASE; S=.base-main; }
    PYTHONPATH=$P timeout 60 python3 -P $S/bench/gpu_bench.py --out /tmp/o-$b --data .shdata --oracle-count-only --skip-latency > $R/oracle-$b.log 2>&1
    cp /tmp/o-$b/gpu_bench.json $R/oracle-$b.json 2>/dev/null
    echo "oracle $b at $(el) s" | tee -a $R/time.txt
done
[ $(el) -lt 455 ] && row base 4cycle 135
