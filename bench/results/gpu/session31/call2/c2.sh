#!/usr/bin/env bash
# Session 31, call 2: the host CPU (admit/encode per piece, serial, fused and over numba
# threads) and apply_profile with the timed call's own updater steps (call_steps).
source .dev28/common.sh
cp .dev28/s31/*.py .dev28/s31/c2.sh $R/; nvidia-smi -L > $R/device.txt; lscpu > $R/lscpu.txt; nproc >> $R/lscpu.txt
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
(cd .dev28/s31 && timeout 120 python3 fuse.py > $R/fuse.txt 2>&1; echo "fuse rc $? at $(el) s" | tee -a $R/time.txt
 for V in 10000 1000000; do timeout 120 python3 par.py $V > $R/par-$V.txt 2>&1; echo "par $V rc $? at $(el) s" | tee -a $R/time.txt; done)
for row in "Q_7 insertion10" "Q_1 deletion10" "Q_5 insertion10" "Q_10 deletion10" "Q_9 insertion10"; do
  set -- $row
  timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 32768 > $R/prof-$1-$2.txt 2>&1
  echo "profile $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$1-$2.txt | cut -c1-70 | tr '\n' ' ')" | tee -a $R/time.txt
done
for defs in "-DVIEW_NS=2000" "-DHELP_MASK=0u"; do
  [ $(el) -gt 400 ] && break
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query Q_7 --stream insertion10 --batch-cap 16384 > "$R/prof$defs-Q_7-insertion10.txt" 2>&1
  echo "profile $defs rc $? at $(el) s: $(grep -E '^apply:' "$R/prof$defs-Q_7-insertion10.txt" | cut -c1-70)" | tee -a $R/time.txt
done
