#!/usr/bin/env bash
# Fifteenth session: the service's latency, main (e08ee7a, .base-main) against branch big-pieces, in turns.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R; trap 'cd $OUT && tar czf r.tgz r && rm -rf r' EXIT
export CUPY_CACHE_DIR=/tmp/cupy-cache; mkdir -p $CUPY_CACHE_DIR; export PYTHONUNBUFFERED=1
cp .devrun/nextK.sh $R/
for v in main branch main branch; do
  [ $(el) -gt 150 ] && break
  src=.; [ $v = main ] && src=.base-main
  n=$(ls -d $R/svc-$v-* 2>/dev/null | wc -l); n=$((n + 1))
  timeout -k 5 $(( 200 - $(el) )) bash scripts/service-bench.sh --src $src --whl .whl-j --out $R/svc-$v-$n --backend gpu --no-pyspy --duration 3 --timeout 60 \
      --tag binary 500000,750000 -- --drain-s 8 --vertices 200000 > $R/svc-$v-$n.log 2>&1
  echo "svc $v $n rc $? at $(el) s" | tee -a $R/time.txt; grep "rate " $R/svc-$v-$n/binary/loadgen.log | cut -d' ' -f2-
done
