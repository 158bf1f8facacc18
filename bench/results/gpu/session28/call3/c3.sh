#!/usr/bin/env bash
# Session 28 call 3 (main 488547b): a light row's batches at batch caps 16,384 and 32,768
# and host pieces of 4,096 / 16,384 / 32,768 (bench/debug/apply_profile.py). Carry: .dev28
source .dev28/common.sh
cp .dev28/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for qs in "Q_10 insertion10" "Q_1 deletion10" "Q_7 insertion10"; do
  for piece in 4096 16384 32768; do
    set -- $qs
    f=$R/prof-$1-$2-p$piece.txt
    timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --piece $piece --batch-cap 16384 32768 > $f 2>&1
    echo "$qs piece $piece rc $? at $(el) s: $(grep '^apply' $f | tr '\n' ' ')" | tee -a $R/time.txt
  done
done
