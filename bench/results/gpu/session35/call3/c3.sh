#!/usr/bin/env bash
# Session 35, call 3, on main: why an updater task's dependent load takes 0.5-2 us (call 1's
# JOB_TRACE=2: most classify tasks, ~17 dependent loads, took 16-33 us; gpu-facts: one
# dependent device read ~155 ns).
# 1. bench/debug/load_latency.py: one lane's chase through L2 over ever wider spans (the
#    same lines: only the 2 MB pages they fall on change), and past L2's size.
# 2. JOB_TRACE=2 of Q_1 deletion10 with the executors polling 8x less (VIEW_NS, WAIT_NS_*),
#    and with fewer resident warps (--blocks 132 and 264 of the default 396).
# Carry: .dev28/common.sh .dev28/shd.tar.xz .dev28/cupy-cache.tgz.aa
NO_CACHE_BACK=1; source .dev28/common.sh
cp bench/results/gpu/session35/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
nvidia-smi -q -d CLOCK > $R/clocks.txt 2>&1
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export DCSM_SHARED_DATA=/tmp/shd PYTHONPATH=/tmp/m
timeout -k 5 120 python3 -P bench/debug/load_latency.py > $R/latency.md 2>&1
echo "load_latency rc $? at $(el) s" | tee -a $R/time.txt; cat $R/latency.md | tee -a $R/time.txt
trace() {  # name, defines, more apply_profile arguments
  DCSM_KERNEL_DEFINES="-DJOB_TRACE=2 $2" timeout -k 5 90 python3 -P bench/debug/apply_profile.py --data /tmp/shd \
      --query Q_1 --stream deletion10 --batch-cap 16384 $3 > $R/trace-$1.txt 2>&1
  echo "trace $1 rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "^apply|step_ns|^  tasks (classify|seginfo|items|segedit)" $R/trace-$1.txt | cut -c1-260 | tee -a $R/time.txt
}
trace base "" ""
trace poll8 "-DVIEW_NS=64000 -DWAIT_NS_MAX=65536 -DWAIT_NS_NEAR=4096" ""
trace blocks132 "" "--blocks 132"
trace blocks264 "" "--blocks 264"
trace base2 "" ""
nvidia-smi -q -d CLOCK > $R/clocks-end.txt 2>&1
