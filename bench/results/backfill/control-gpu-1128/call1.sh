#!/usr/bin/env bash
# Call 1 of the first session of 2026-11-29 (written 2026-11-28 04:45 UTC):
# why the beside backfill takes 29-30 s (d4de148: 12-16 s), the GPU control (--no-backfill),
# inline on main, and os.sched_yield() in _settle (yield_patch.py).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; }
trap finish EXIT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-svc/*.whl || exit 1
rm -rf /tmp/new /tmp/yld /tmp/d4 /tmp/c14
inst() { python3 -m pip install -q --no-deps --no-build-isolation --no-index --target $2 $1 >/dev/null 2>&1 || { echo "install $1 failed"; exit 1; }; }
inst . /tmp/new; inst .base-d4de148 /tmp/d4; inst .base-14f9d5b /tmp/c14
cp -r /tmp/new /tmp/yld && python3 .devrun/yield_patch.py /tmp/yld || exit 1
cp .devrun/call1.sh $R/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $R/device.txt
git log -1 --format='%H %s' > $R/commit.txt 2>/dev/null
echo "setup at $(el) s" | tee -a $R/time.txt
BF="--backend gpu --edges 200000 --updates 16000 --rate 2000 --backfill-at 2"
i=0
for v in beside:new beside:d4 inline:new control:new beside:c14 beside:yld control:yld beside:new; do
    i=$((i+1)); m=${v%%:*}; p=${v##*:}
    [ $(el) -lt 470 ] || break
    fl=""; [ $m = control ] && fl=--no-backfill; [ $m = inline ] && fl=--inline
    src=.; case $p in d4) src=.base-d4de148;; c14) src=.base-14f9d5b;; esac
    PYTHONPATH=/tmp/$p:/tmp/site timeout -k 5 130 python3 -P $src/bench/backfill_beside.py $BF $fl --out $R/bf-$i-$m-$p > $R/bf-$i-$m-$p.log 2>&1
    echo "bf $i $m $p rc $? at $(el) s" | tee -a $R/time.txt
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv >> $R/device.txt
