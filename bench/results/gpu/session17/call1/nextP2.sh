#!/usr/bin/env bash
# Written in the sixteenth session for the next one: branch host-pipeline against main on
# the 43M graph. The 43M triangle is bound by the host (its updater waited 286 ms of 0.56 s
# for input, session 15 call 3); on the branch an apply in pieces of >= 8,192 (the 43M
# rows: 16,384) admits and encodes the next piece in a second thread: the host's whole
# path 52.3 -> 35.9 ns an update on the 2-core development host.
#  1. bench/debug/host_path_cost.py on this host, both trees ("whole path" lines);
#  2. the triangle m / hp in turns (three each), the 4-cycle once each (executor-bound:
#     should be level).
# Prepare: as nextP1.sh (.base-hp). Carry: .devrun .whl-gpu .base-hp
source .devrun/common.sh
rm -rf /tmp/m /tmp/hp
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/hp .base-hp >/dev/null 2>&1 || exit 1
cp .devrun/nextP2.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz  # the static cache's key
echo "graph ready at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/hp:/tmp/site timeout -k 5 90 python3 -P .base-hp/bench/debug/host_path_cost.py --vertices 4800000 \
    --updates 1048576 --piece 16384 --repeat 2 > $R/host-path.txt 2>&1
echo "host path: $(grep 'whole path' $R/host-path.txt | tr '\n' ' ')" | tee -a $R/time.txt
for run in "triangle hp 1" "triangle m 1" "triangle hp 2" "triangle m 2" "4cycle hp 1" "4cycle m 1" "triangle hp 3" "triangle m 3"; do
  set -- $run; tag=$1-$2-$3; [ $(el) -gt $([ $1 = 4cycle ] && echo 480 || echo 530) ] && continue
  PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 60 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s: $(tail -1 $R/$tag.log)" | tee -a $R/time.txt
done
