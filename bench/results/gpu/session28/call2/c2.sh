#!/usr/bin/env bash
# Session 28 call 2 (main 488547b): where a light oracle row's time goes, host and device
# (bench/debug/apply_profile.py), with the default pieces and smaller ones. Carry: .dev28
source .dev28/common.sh
cp .dev28/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for run in "Q_10 insertion10" "Q_10 insertion10 --piece 1024" "Q_10 insertion10 --piece 16384" "Q_5 deletion10" "Q_1 deletion10" "Q_10 insertion10 --cprofile"; do
  set -- $run; q=$1; s=$2; shift 2
  f=$R/prof-$q-$s$(echo "$@" | tr -d ' -').txt
  timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $q --stream $s "$@" > $f 2>&1
  echo "$run rc $? at $(el) s: $(grep -m1 '^apply' $f)" | tee -a $R/time.txt
done
