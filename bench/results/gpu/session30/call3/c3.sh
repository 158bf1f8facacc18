#!/usr/bin/env bash
# Session 30, call 3: branch hint (branch light + the host's promise), the oracle count rows
# in four turns of four variants, first on the machine:
#   l  no promise (-DPROMISE_WAIT_NS=0), cap 16,384: branch light as call 2 tested it
#   p  the promise, cap 16,384
#   b  no promise, cap 32,768
#   q  the promise, cap 32,768
# python3 bench/debug/compare_turns.py $R l1 p1 b1 q1 ...; then apply_profile timelines
# (p at caps 16,384 and 32,768) and a short race hunt with the promise at cap 32,768.
# Carry: .dev28/common.sh .dev28/cupy-cache.tgz.aa .dev28/shd.tar.xz
source .dev28/common.sh
cp bench/results/gpu/session30/call3/c3.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
export PYTHONPATH=/tmp/m
for turn in l1 p1 b1 q1 q2 b2 p2 l2 l3 p3 b3 q3 q4 b4 p4 l4; do
  [ $(el) -gt 380 ] && break
  v=${turn:0:1}; defs=""; cap=""
  case $v in l) defs="-DPROMISE_WAIT_NS=0";; b) defs="-DPROMISE_WAIT_NS=0"; cap="--batch-cap 32768";; q) cap="--batch-cap 32768";; esac
  DCSM_KERNEL_DEFINES="$defs" timeout -k 5 80 python3 -P bench/gpu_bench.py --out $R/$turn --data /tmp/shd \
      --oracle-count-only --skip-latency --repeat 5 $cap > $R/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R $(ls -d $R/[lpbq][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
tail -4 $R/turns.md | tee -a $R/time.txt
for row in "Q_1 deletion10" "Q_7 insertion10"; do
  [ $(el) -gt 470 ] && break
  set -- $row
  timeout -k 5 40 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query $1 --stream $2 --batch-cap 16384 32768 > $R/prof-p-$1-$2.txt 2>&1
  echo "profile p $1 $2 rc $? at $(el) s: $(grep -E '^apply:' $R/prof-p-$1-$2.txt | cut -c1-60 | tr '\n' ' ')" | tee -a $R/time.txt
done
[ $(el) -lt 480 ] && { timeout -k 5 $(( 580 - $(el) )) python3 -P bench/debug/race_hunt.py --repeat 6 --check --budget $(( 560 - $(el) )) \
    --variant= --variant=-DHELP_MASK=0u > $R/race.log 2>&1
echo "race_hunt rc $? at $(el) s" | tee -a $R/time.txt; tail -4 $R/race.log | tee -a $R/time.txt; }
