#!/usr/bin/env bash
# Session 30, call 1: branch light (main + done-lines + the input ring's short-write mirror
# copy), the oracle count rows in four turns of four variants, first on the machine:
#   o  main's behaviour     (DCSM_MIRROR_SHORT=0, -DDONE_LINES=0)
#   m  the mirror copy only (-DDONE_LINES=0)
#   l  both (the branch as built)
#   c  both, at batch cap 24,576 (the default 16,384)
# python3 bench/debug/compare_turns.py $R o1 m1 l1 c1 ... o4 m4 l4 c4;
# then apply_profile's timelines of Q_1 deletion10 and Q_7 insertion10 (o and l, caps
# 16,384 and 24,576).
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session30/call1/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for turn in o1 m1 l1 c1 o2 m2 l2 c2 o3 m3 l3 c3 o4 m4 l4 c4; do
  [ $(el) -gt 420 ] && break
  v=${turn:0:1}; defs=""; ms=1; cap=""
  [ $v = o ] && { defs="-DDONE_LINES=0"; ms=0; }
  [ $v = m ] && defs="-DDONE_LINES=0"
  [ $v = c ] && cap="--batch-cap 24576"
  DCSM_MIRROR_SHORT=$ms DCSM_KERNEL_DEFINES="$defs" timeout -k 5 80 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 $cap > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R $(ls -d $R/[omlc][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -4 $R/turns.md | tee -a $R/time.txt
for v in o l; do
  defs=""; ms=1; [ $v = o ] && { defs="-DDONE_LINES=0"; ms=0; }
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    [ $(el) -gt 540 ] && break
    set -- $row
    DCSM_MIRROR_SHORT=$ms DCSM_KERNEL_DEFINES="$defs" timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
        --query $1 --stream $2 --batch-cap 16384 24576 > $R/prof-$v-$1-$2.txt 2>&1
    echo "profile $v $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$v-$1-$2.txt | cut -c1-60 | tr '\n' ' ')" | tee -a $R/time.txt
  done
done
