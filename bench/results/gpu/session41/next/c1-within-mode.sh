#!/usr/bin/env bash
# Written in session 41 (180 s of device time left, under a start's 240 s; never run).
# Turns judged within the fast mode. Session 41's call 4 found that a light row's mode
# follows how fast the host thread's core runs Python at the time, so medians across
# modes compare luck. gpu_bench rows now record that speed (host_python_us_each), and
# compare_turns.py --python-below keeps the rows that found the core fast.
# (1) Turns of the 22 oracle count rows, five timed of each, the first of each untimed:
#     m: main (this checkout);
#     p: main with --piece 8192 --batch-cap 32768 (lower in the turns of sessions 37 and 39,
#        across modes);
#     s: branch small-done (32-byte completion records, exact in session 41's call 2, level
#        there within each mode on a few light rows; carried as .dev28/small-done.tgz:
#        `git archive small-done pyproject.toml README.md dcsm gpu schemas service loadgen`).
# (2) compare_turns over all runs, then within the fast mode: --python-below 1.3 x the
#     least speed any row recorded (the two modes were 853-1,072 and 1,390-1,758 us).
# Carry: .dev28/shd.tar.xz .dev28/small-done.tgz
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session41/next/c1-within-mode.sh $R/
mkdir -p /tmp/sd && tar xzf .dev28/small-done.tgz -C /tmp/sd
(cd /tmp/sd && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/ms . > $R/install-s.log 2>&1)
md5sum /tmp/sd/gpu/*.cu /tmp/sd/gpu/*.cuh /tmp/sd/gpu/*.py > $R/files-s.md5
prewarm "16384|" "32768|"  # m's and p's kernels; s's compiles in its untimed first turn
pp() { case $1 in s) echo /tmp/ms;; *) echo /tmp/m;; esac; }
flags() { case $1 in p) echo "--piece 8192 --batch-cap 32768";; esac; }
mkdir -p $R/turns
for turn in m0 p0 s0 m1 p1 s1 m2 p2 s2 m3 p3 s3 m4 p4 s4 m5 p5 s5; do
  [ $(el) -gt 330 ] && break
  # shellcheck disable=SC2046
  PYTHONPATH=$(pp ${turn:0:1}) timeout -k 5 $([ ${turn:1} = 0 ] && echo 120 || echo 50) python3 -P bench/gpu_bench.py \
      --out $R/turns/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 $(flags ${turn:0:1}) \
      > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
rm -rf $R/turns/m0 $R/turns/p0 $R/turns/s0  # numba's first compile on this machine
runs=$(ls -d $R/turns/[mps][1-9] | xargs -n1 basename)
python3 bench/debug/compare_turns.py $R/turns $runs > $R/turns.md 2>&1
below=$(python3 -c "
import json, sys, pathlib
us = [u for d in pathlib.Path('$R/turns').iterdir() if (d / 'gpu_bench.json').exists()
      for r in json.loads((d / 'gpu_bench.json').read_text())['search'] for u in r.get('host_python_us_each', [])]
print(round(1.3 * min(us)))")
{ echo; echo "Within the fast mode (host_python_us under $below):"; echo
  python3 bench/debug/compare_turns.py --python-below $below $R/turns $runs; } >> $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
