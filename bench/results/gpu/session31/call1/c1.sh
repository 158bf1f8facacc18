#!/usr/bin/env bash
# Written in session 30 for the next one (not run): branch batches (first-piece + the idle
# publish of branch host + hint's promise). A light row's time follows the count of its
# device batches (session30/README.md, "Timelines as pictures"): each costs 0.2-0.4 ms of
# updater jobs nearly whatever its size, and the kernel takes what the host has written
# whenever it is free. A large first piece makes two batches of the stream, but in session
# 28 (prof-Q_7-insertion10-p16384.txt, drawn by bench/debug/plot_apply_timeline.py) the
# first piece of 16,384 was taken 0.2 ms after its commit: its tail was published only at
# the next flush, after the host's next admission. The idle publish (call 5) fixes that lag.
# In turns, first on the machine:
#   d  main's behaviour (DCSM_IDLE_WAIT=0, -DPROMISE_WAIT_NS=0, pieces of 4,096)
#   e  a first piece of 12,288 (DCSM_FIRST_PIECE), without the idle publish
#   f  a first piece of 12,288 with the idle publish
#   g  as f, with the promise at batch cap 32,768
# python3 bench/debug/compare_turns.py $R d1 e1 f1 g1 ... d4 e4 f4 g4; then the timelines
# (plot them: bench/debug/plot_apply_timeline.py), then the race hunt with the promise. Run
# from a checkout of batches. Merge what wins (without its A/B switches), after the GPU
# tests (scripts/gpu-suite.sh --tests tests/gpu/test_input_ring_gpu.py
# tests/gpu/test_engine_gpu.py tests/gpu/test_long_run.py tests/gpu/test_oracle_gpu.py).
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session30/next/c1.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for turn in d1 e1 f1 g1 g2 f2 e2 d2 d3 e3 f3 g3 g4 f4 e4 d4; do
  [ $(el) -gt 360 ] && break
  v=${turn:0:1}; defs=""; fp=12288; iw=1; cap=""
  case $v in d) defs="-DPROMISE_WAIT_NS=0"; fp=0; iw=0;; e) defs="-DPROMISE_WAIT_NS=0"; iw=0;;
             f) defs="-DPROMISE_WAIT_NS=0";; g) cap="--batch-cap 32768";; esac
  DCSM_IDLE_WAIT=$iw DCSM_FIRST_PIECE=$fp DCSM_KERNEL_DEFINES="$defs" timeout -k 5 80 python3 -P bench/gpu_bench.py \
      --out $R/$turn --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 $cap > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R $(ls -d $R/[defg][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -1 $R/turns.md | tee -a $R/time.txt
for run in "0|0|-DPROMISE_WAIT_NS=0|16384" "1|12288|-DPROMISE_WAIT_NS=0|16384" "1|12288||32768"; do
  IFS='|' read -r iw fp defs cap <<< "$run"
  for row in "Q_1 deletion10" "Q_7 insertion10"; do
    [ $(el) -gt 450 ] && break
    set -- $row; tag="iw$iw-fp$fp-cap$cap"
    DCSM_IDLE_WAIT=$iw DCSM_FIRST_PIECE=$fp DCSM_KERNEL_DEFINES="$defs" timeout -k 5 30 python3 -P bench/debug/apply_profile.py \
        --data /tmp/shd --query $1 --stream $2 --batch-cap $cap > $R/prof-$tag-$1-$2.txt 2>&1
    echo "profile $tag $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-$tag-$1-$2.txt | cut -c1-60)" | tee -a $R/time.txt
  done
done
[ $(el) -lt 480 ] && { timeout -k 5 $(( 580 - $(el) )) python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget $(( 560 - $(el) )) \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt; }
