#!/usr/bin/env bash
# Session 41, call 3: what sets the light rows' two modes (main a7d8f46).
# Call 2's turns: every light row of one engine sat at ~1.15-1.2 ms (Q_1 deletion10) or
# ~1.6-1.8 ms, and the host thread's core (gpu_bench's host_cpu_each) was 3 in all three
# slow deletion engines that ran there, while core 1 gave both modes.
# (1) host.txt: the CPU's topology, numba's threading layer, the device's interrupts, and
#     the busiest threads on the machine before any run.
# (2) Main beside RapidFlow (this session's figure for issue 13).
# (3) Turns of the 22 oracle count rows: m (main), w (OMP_WAIT_POLICY=PASSIVE: numba's
#     OpenMP workers sleep at once instead of spinning beside the host thread), z
#     (DCSM_HOST_THREADS=0: no worker threads), b (OMP_PROC_BIND=spread OMP_PLACES=cores:
#     the host thread and the workers each on a core of their own).
# (4) A core sweep: z pinned to one core at a time (taskset -c K, K = 0..15), so that a
#     core's own speed shows with nothing of ours beside it; twice where time allows.
# (5) Where a run's threads sit: ps every 20 ms during one m run.
# Carry: .dev28/shd.tar.xz .peers/bin/RapidFlow.out
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session41/call3/c3.sh $R/
{ lscpu; echo; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$(basename $c): siblings $(cat $c/topology/thread_siblings_list) node $(ls -d $c/node* 2>/dev/null | xargs -n1 basename | tr '\n' ' ')"; done
  echo; grep -iE "nvidia|CPU" /proc/interrupts | cut -c1-300
  echo; python3 -c "
import numba, numpy as np
from numba import njit, prange
@njit(parallel=True)
def f(a):
    s = 0.0
    for i in prange(a.shape[0]): s += a[i]
    return s
f(np.ones(1000)); print('numba', numba.__version__, 'layer', numba.threading_layer(), 'threads', numba.get_num_threads())"
  echo; ps -eLo psr,pcpu,pid,tid,comm --sort=-pcpu | head -25; } > $R/host.txt 2>&1
prewarm "16384|"
mkdir -p $R/turns
env_of() { case $1 in m) echo "";; z) echo "DCSM_HOST_THREADS=0";; w) echo "OMP_WAIT_POLICY=PASSIVE";;
  b) echo "OMP_PROC_BIND=spread OMP_PLACES=cores";; esac; }
bench() {  # bench RUN [taskset cores]: one gpu_bench run of the 22 rows into $R/turns/RUN
  local run=$1 pin=${2:-}
  env $(env_of ${run:0:1}) timeout -k 5 $([ ${run:1} = 0 ] && echo 120 || echo 50) ${pin:+taskset -c $pin} \
      python3 -P bench/gpu_bench.py --out $R/turns/$run --data /tmp/shd --oracle-count-only --skip-latency \
      --repeat 5 > $R/turns/$run.log 2>&1
  echo "$run${pin:+ (cores $pin)} rc $? at $(el) s" | tee -a $R/time.txt
}
bench m0  # numba's first compile on this machine; untimed
beside_rapidflow 120
for turn in m1 w1 z1 b1 m2 w2 z2 b2 m3 w3 z3 b3 m4 w4 z4 b4; do
  [ $(el) -gt 300 ] && break
  bench $turn
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[mwzb][1-9] | xargs -n1 basename) > $R/turns.md 2>&1
python3 bench/debug/turn_modes.py $R/turns >> $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for pass in 1 2; do
  for k in $(seq 0 15); do
    [ $(el) -gt 500 ] && break 2
    bench z$((pass * 100 + k)) $k
  done
done
bench m9 &
sleep 3
py=$(pgrep -f "gpu_bench.py --out $R/turns/m9" | head -1)
for i in $(seq 1 150); do
  ps -L -o tid,psr,pcpu,stat,comm -p "$py" 2>/dev/null | sed "s/^/$i /"; sleep 0.02
done > $R/threads-m9.txt
wait
python3 - "$R/turns" <<'PY' | tee -a $R/time.txt
import json, sys, statistics
from pathlib import Path
root = Path(sys.argv[1])
print("| run | core | Q_1 ins | Q_7 ins | Q_1 del | Q_5 del | Q_7 del | Q_10 del |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for d in sorted(root.iterdir(), key=lambda p: (p.name[0], int(p.name[1:]) if p.name[1:].isdigit() else 0)):
    if not (d / "gpu_bench.json").exists():
        continue
    rows = {(r["query"], r["stream"]): r for r in json.loads((d / "gpu_bench.json").read_text())["search"]}
    core = rows[("Q_1", "deletion10")].get("host_cpu_each", ["?"])
    cells = [1e3 * rows[k]["seconds"] for k in [("Q_1", "insertion10"), ("Q_7", "insertion10"), ("Q_1", "deletion10"),
             ("Q_5", "deletion10"), ("Q_7", "deletion10"), ("Q_10", "deletion10")]]
    print(f"| {d.name} | {statistics.mode(core)} | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
PY
