#!/usr/bin/env bash
# Session 20 call 5, main's final code (8a18fe4): the 4-cycle's hub phase (wedge_hubs, ~55 ms
# of the 20M 4-cycle's ~75) under a few settings, for the next session:
#  HUB_CHUNK 8 (default) against 32 and 2 (u a warp's item; sed copies), and blocks of
#  256 / 512 / 1024 threads; then, if the host has Nsight Compute, wedge_hubs' memory and
#  atomic counters on a 5M-edge graph.
# Carry: .devrun
source .devrun/common-nowhl.sh
NO_CACHE_BACK=1
rm -rf /tmp/m /tmp/c32 /tmp/c2 /tmp/s32 /tmp/s2
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
for c in 32 2; do rm -rf /tmp/s$c; mkdir -p /tmp/s$c; cp -r . /tmp/s$c
  sed -i "s/^#define HUB_CHUNK 8$/#define HUB_CHUNK $c/" /tmp/s$c/gpu/ring_count.cuh; grep -c "define HUB_CHUNK $c" /tmp/s$c/gpu/ring_count.cuh >> $R/sed.txt
  (cd /tmp/s$c && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/c$c . >/dev/null 2>&1) || exit 1; done
cp .devrun/s20c5.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
echo "installed at $(el) s" | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 100 python3 -P bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
    --variants 512:16,256:16,1024:16 --patterns cycle4 --repeat 2 --phases --write-graph /tmp/g20.npz \
    --out $R/ab20-threads.json > $R/ab20-threads.log 2>&1; echo "threads rc $? at $(el) s" | tee -a $R/time.txt
grep -o '"threads": [0-9]*\|"seconds": [0-9.]*\|"wedge_hubs": [0-9.]*' $R/ab20-threads.log | paste - - - | tee -a $R/time.txt
for c in 32 2; do [ $(el) -gt 190 ] && break
  PYTHONPATH=/tmp/c$c timeout -k 5 50 python3 -P bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 2 --phases --out $R/ab20-chunk$c.json > $R/ab20-chunk$c.log 2>&1
  echo "HUB_CHUNK $c rc $? at $(el) s" | tee -a $R/time.txt
  grep -o '"count": [0-9]*\|"seconds": [0-9.]*\|"wedge_hubs": [0-9.]*' $R/ab20-chunk$c.log | paste - - - | tee -a $R/time.txt; done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}" | tee -a $R/time.txt
if [ -n "$NCU" ] && [ $(el) -lt 200 ]; then
  PYTHONPATH=/tmp/m timeout -k 5 $(( 235 - $(el) )) $NCU --kernel-name wedge_hubs --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section Occupancy --section WarpStateStats python3 -P bench/debug/label_count_ab.py --edges 5000000 --labels 1 --variants 512:16 \
    --patterns cycle4 --repeat 1 --out $R/ncu-ab.json > $R/ncu.log 2>&1; echo "ncu rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "Throughput|Hit Rate|Occupancy|Stall|Busy|Bandwidth|Duration" $R/ncu.log | head -40 | tee -a $R/time.txt
fi
