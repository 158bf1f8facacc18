#!/usr/bin/env bash
# Session 26 call 2 (main 1c085dc): the 43M 4-cycle beside RapidFlow with a search limit of
# 300 s (20x the GPU row's ~15 s), issue 17 item 6. RapidFlow's own limit counts its search
# only; its load and preprocessing of the 38.7M-edge graph take ~2 min more.
# Carry: .devrun .peers/bin/RapidFlow.out
export NO_CACHE_BACK=1; source .devrun/common-nowhl.sh
cp .devrun/c2.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
timeout 100 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph at $(el) s" | tee -a $R/time.txt
timeout -k 5 $(( 593 - $(el) )) python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns 4cycle \
    --batch-size 1048576 --static-cache /tmp/static43.json --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 300 \
    --out $R/4cycle-rf.json > $R/4cycle-rf.log 2>&1
echo "4cycle rc $? at $(el) s: $(tail -1 $R/4cycle-rf.log)" | tee -a $R/time.txt
