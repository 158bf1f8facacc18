#!/usr/bin/env bash
# Session 37, call 3: how an apply is cut into pieces and batches, in turns on the 22 oracle
# count rows (main's kernel: FIND and COPY in one path). A light row's device time is its
# batches' (0.2-0.5 ms each, mostly fixed: call 2's apply_profile, Q_7 insertion10 in 3
# batches, Q_1 deletion10 in 4), so fewer, larger batches may pay; a smaller first piece
# starts the first one sooner.
#   m  main: pieces of 4096, batch_cap 16384
#   k  batch_cap 32768
#   f  first piece 2048
#   g  first piece 2048, batch_cap 32768
#   p  pieces of 8192, batch_cap 32768
# Carry: .dev28/common.sh .dev28/shd.tar.xz
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session37/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
opts() { case $1 in
  m) echo "";; k) echo "--batch-cap 32768";; f) echo "--first-piece 2048";;
  g) echo "--first-piece 2048 --batch-cap 32768";; p) echo "--piece 8192 --batch-cap 32768";; esac; }
mkdir -p $R/turns
for turn in m1 k1 f1 g1 p1 m2 k2 f2 g2 p2 m3 k3 f3 g3 p3 m4 k4 f4 g4 p4; do
  [ $(el) -gt 170 ] && break
  timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 $(opts ${turn:0:1}) > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mkfgp][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
