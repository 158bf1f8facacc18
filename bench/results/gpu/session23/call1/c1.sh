#!/usr/bin/env bash
# Session 23, call 1: session 22's next/nextB.sh (the oracle rows against the host's piece
# size, 4,096 / 8,192 / 16,384 / 32,768 = one piece a light row) with the Q_1 timelines, then
# the response rows and the oracle rows beside RapidFlow on main's code (nextA.sh parts 2-3).
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py bench/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
summ() { python3 -c "import json; r=[x for x in json.load(open('$1/gpu_bench.json'))['search'] if x['query']!='all at once']; print('  ', len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's; Q_1/Q_5/Q_7/Q_10 ins ms:', [round(1e3*x['seconds'],2) for x in r if x['query'] in ('Q_1','Q_5','Q_7','Q_10') and x['stream']=='insertion10'])" 2>&1; }
for turn in 1 2; do
  for piece in 4096 16384 32768 8192; do
    [ $(el) -gt 330 ] && continue
    timeout -k 5 100 python3 -P -c "
import runpy, sys
import dcsm.gpu.engine as e
p = int(sys.argv[1]); e._PIECE = p; e._PIECE_MAX = max(p, e._PIECE_MAX)
sys.argv = ['gpu_bench.py'] + sys.argv[2:]
runpy.run_path('bench/gpu_bench.py', run_name='__main__')" $piece --out $R/oracle-$piece-$turn --data .shdata \
        --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$piece-$turn.log 2>&1
    echo "piece $piece turn $turn rc $? at $(el) s" | tee -a $R/time.txt
    summ $R/oracle-$piece-$turn | tee -a $R/time.txt
  done
done
for piece in 4096 32768; do
  timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 --batch-cap 16384 32768 \
      --piece $piece > $R/apply-profile-$piece.txt 2>&1
  echo "apply_profile piece $piece rc $? at $(el) s: $(sed -n 2,3p $R/apply-profile-$piece.txt)" | tee -a $R/time.txt
done
timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/latency --data .shdata --skip-search --sustain-updates 0 > $R/latency.log 2>&1
echo "latency rc $? at $(el) s" | tee -a $R/time.txt; grep -E "t=0\)" $R/latency/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
timeout -k 5 $(( 585 - $(el) )) python3 -P bench/gpu_bench.py --out $R/oracle-rf --data .shdata --oracle-count-only --skip-latency \
    --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > $R/oracle-rf.log 2>&1
echo "oracle rows beside RapidFlow rc $? at $(el) s" | tee -a $R/time.txt; summ $R/oracle-rf | tee -a $R/time.txt
grep -A3 "^| dataset | mode" $R/oracle-rf/gpu_bench.md | tail -2 | tee -a $R/time.txt
