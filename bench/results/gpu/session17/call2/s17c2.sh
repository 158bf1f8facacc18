#!/usr/bin/env bash
# Session 17 call 2 (main, ff2d521): where the low-rate response time goes, and the two
# knobs that touch it, in turns; the 43M triangle pinned to the GPU's local cores.
#  1. response rows (gpu_bench.py --skip-search --sustain-updates 0): default against
#     IDLE_POLL_NS=500 (updater warp 0's idle poll of the host tail, 2,000 ns), turns;
#  2. oracle count rows: RING_WIDE 8 against 4, turns (nextP3's part 1);
#  3. apply_profile.py on Q_1 insertion10;
#  4. the host's topology; the 43M triangle with and without taskset to the GPU's
#     local_cpulist, in turns.
# Carry: .devrun .whl-gpu .shdata/oracle-github
source .devrun/common.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s17c2.sh $R/; nvidia-smi -L > $R/device.txt
export PYTHONPATH=/tmp/m:/tmp/site DCSM_SHARED_DATA=$PWD/.shdata
for run in "default 1" "-DIDLE_POLL_NS=500 1" "default 2" "-DIDLE_POLL_NS=500 2"; do
  set -- $run; d=$([ $1 = default ] || echo $1); tag=$(echo "$1" | tr -d '=-')-$2
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 80 python3 -P bench/gpu_bench.py --out $R/lat-$tag --data .shdata \
      --skip-search --sustain-updates 0 > $R/lat-$tag.log 2>&1
  echo "latency '$d' $2 rc $? at $(el) s" | tee -a $R/time.txt
  grep "t=0)" $R/lat-$tag/gpu_bench.md | tee -a $R/time.txt
done
for run in "default 1" "-DRING_WIDE=8 1" "default 2" "-DRING_WIDE=8 2" "default 3" "-DRING_WIDE=8 3"; do
  set -- $run; d=$([ $1 = default ] || echo $1); tag=$(echo "$1" | tr -d '=-')-$2
  [ $(el) -gt 330 ] && break
  DCSM_KERNEL_DEFINES="$d" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-$tag --data .shdata \
      --oracle-count-only --skip-latency > $R/oracle-$tag.log 2>&1
  echo "oracle '$d' $2 rc $? at $(el) s" | tee -a $R/time.txt
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); u=j['updater'][0]; print('22 rows', round(sum(r['seconds'] for r in j['search'] if r['query'] != 'all at once'), 4), 'input read us/batch', round(u['step_input_read_us'], 1), 'batches', u['batches'])" $R/oracle-$tag/gpu_bench.json | tee -a $R/time.txt
done
[ $(el) -lt 360 ] && { timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data .shdata --query Q_1 --stream insertion10 \
    > $R/apply-profile-Q_1.txt 2>&1; echo "apply_profile rc $? at $(el) s" | tee -a $R/time.txt; }
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
local=$(cat /sys/bus/pci/devices/$bus/local_cpulist 2>/dev/null); node=$(cat /sys/bus/pci/devices/$bus/numa_node 2>/dev/null)
{ nvidia-smi topo -m; lscpu; echo "bus $bus numa_node $node local_cpulist $local"; } > $R/topo.txt 2>&1
echo "GPU $bus numa_node '$node' local_cpulist '$local'; online $(cat /sys/devices/system/cpu/online)" | tee -a $R/time.txt
[ -n "$local" ] && [ "$local" != "$(cat /sys/devices/system/cpu/online)" ] && [ $(el) -lt 420 ] && {
  cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
  timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
  touch -d @1795916919.826114635 /tmp/g43.npz
  for run in "pin 1" "free 1" "pin 2" "free 2" "pin 3" "free 3"; do
    set -- $run; [ $(el) -gt 540 ] && break
    pre=$([ $1 = pin ] && echo "taskset -c $local")
    $pre timeout -k 5 50 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle \
        --batch-size 1048576 --static-cache /tmp/static43.json --out $R/tri-$1-$2.json > $R/tri-$1-$2.log 2>&1
    echo "triangle $1 $2 rc $? at $(el) s: $(tail -1 $R/tri-$1-$2.log)" | tee -a $R/time.txt
  done
}
