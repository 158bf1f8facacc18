#!/usr/bin/env bash
# Written in the twenty-second session for a later one (not run): a light oracle row's time
# as the number of batches its pieces make. In session 22 (call 2, apply_profile Q_1) a
# light row of ~29K updates went as four batches, each begun 0.45-0.49 ms after the last,
# and its first piece of 4,096 was written 0.5 ms after the call began (under cProfile).
# Pieces are n / 16 within [_PIECE, _PIECE_MAX] = [4096, 16384] (gpu/engine.py piece_size):
# 4,096 for a light row. Larger first pieces start the device later but make fewer batches.
# This sweeps the smallest piece, _PIECE, over the oracle count rows (median of five) and
# prints the Q_1 timeline at each (bench/debug/apply_profile.py, no cProfile), main's code.
# Prepare: cp bench/results/gpu/session17/common-nowhl.sh .devrun/; .shdata = ../shared/data.
# Carry: .devrun .shdata
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.shdata
for turn in 1 2; do
  for piece in 4096 8192 16384; do
    [ $(el) -gt 500 ] && continue
    timeout -k 5 120 python3 -P -c "
import runpy, sys
import dcsm.gpu.engine as e
e._PIECE = int(sys.argv[1])
sys.argv = ['gpu_bench.py'] + sys.argv[2:]
runpy.run_path('bench/gpu_bench.py', run_name='__main__')" $piece --out $R/oracle-$piece-$turn --data .shdata \
        --oracle-count-only --skip-latency --repeat 5 > $R/oracle-$piece-$turn.log 2>&1
    echo "piece $piece turn $turn rc $? at $(el) s" | tee -a $R/time.txt
    python3 -c "import json; r=[x for x in json.load(open('$R/oracle-$piece-$turn/gpu_bench.json'))['search'] if x['query']!='all at once']; print('  ', len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's; Q_1/Q_5/Q_7/Q_10 ms:', [round(1e3*x['seconds'],2) for x in r if x['query'] in ('Q_1','Q_5','Q_7','Q_10')])" 2>&1 | tee -a $R/time.txt
  done
done
for piece in 4096 8192 16384; do
  timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 --batch-cap 16384 \
      --piece $piece > $R/apply-profile-$piece.txt 2>&1
  echo "apply_profile piece $piece rc $?: $(sed -n 2p $R/apply-profile-$piece.txt)" | tee -a $R/time.txt
done
