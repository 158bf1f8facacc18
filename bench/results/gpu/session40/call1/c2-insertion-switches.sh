#!/usr/bin/env bash
# Written in session 39 (no device time left; never run). An insertion batch costs the
# updater ~0.36 ms + 7.7 ns an update (session37/call2/profm-Q_7-insertion10.txt), so the
# light insertion rows are their 3 batches. session39/insertion-batch.md reads where it goes
# and proposes switches; next/insertion-switches.patch (a helper's prototype, on a3e9143)
# adds four of them, default off: the default build's SASS is unchanged (2f64ec0c...), and
# every switch compiles with and without CHECK=1. PUBLISH_ALONE exists on main already.
# Turns of the 22 oracle count rows: m (no switch: main's SASS), a (-DPUBLISH_ALONE=8: only
# the deletion rows had rejected it, and they no longer reach J_COPY), l (a and
# PUBLISH_LEAN=1), p (ALLOC_PREFETCH=1), c (COMPACT_INLINE=1 COMPACT_DIV=8: turn the heavy
# rows too, their lists then keep up to 1/8 dead entries); apply_profile of Q_7 insertion10
# with each; then the race hunt with self-checks on the fastest. Nothing is exact until the
# engine tests pass with it: commit a switch's code only then.
# Carry: .dev28/shd.tar.xz (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session39/next/c2-insertion-switches.sh bench/results/gpu/session39/next/insertion-switches.patch $R/
rm -rf /tmp/ins && mkdir -p /tmp/ins && cp -r pyproject.toml README.md dcsm gpu schemas service loadgen /tmp/ins/
(cd /tmp/ins && patch -p1 < "$OLDPWD/bench/results/gpu/session39/next/insertion-switches.patch") > $R/patch.log 2>&1 \
    || { echo "the patch did not apply: $R/patch.log"; exit 1; }
rm -rf /tmp/mi && (cd /tmp/ins && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mi . \
    > $R/install-ins.log 2>&1) || exit 1
export PYTHONPATH=/tmp/mi
defs() { case $1 in m) echo "";; a) echo "-DPUBLISH_ALONE=8";; l) echo "-DPUBLISH_ALONE=8 -DPUBLISH_LEAN=1";;
         p) echo "-DALLOC_PREFETCH=1";; c) echo "-DCOMPACT_INLINE=1 -DCOMPACT_DIV=8";; esac; }
prewarm "16384|" "16384|$(defs a)" "16384|$(defs l)" "16384|$(defs p)" "16384|$(defs c)"
mkdir -p $R/turns
for turn in m1 a1 l1 p1 c1 m2 a2 l2 p2 c2 m3 a3 l3 p3 c3 m4 a4 l4 p4 c4; do
  [ $(el) -gt 330 ] && break
  DCSM_KERNEL_DEFINES="$(defs ${turn:0:1})" timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/turns/$turn \
      --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/turns/$turn.log 2>&1
  echo "$turn rc $? at $(el) s" | tee -a $R/time.txt
done
python3 bench/debug/compare_turns.py $R/turns $(ls -d $R/turns/[malpc][0-9] | xargs -n1 basename) > $R/turns.md 2>&1
cat $R/turns.md | tee -a $R/time.txt
for v in m a l p c; do
  [ $(el) -gt 420 ] && break
  DCSM_KERNEL_DEFINES="$(defs $v)" timeout -k 5 60 python3 -P bench/debug/apply_profile.py --data /tmp/shd --query Q_7 \
      --stream insertion10 --batch-cap 16384 > $R/prof$v-Q_7-insertion10.txt 2>&1
  echo "apply_profile ($v) rc $? at $(el) s: $(grep -E '^apply' $R/prof$v-Q_7-insertion10.txt)" | tee -a $R/time.txt
done
timeout -k 5 $(( 560 - $(el) )) python3 -P bench/debug/race_hunt.py --repeat 3 --check --budget $(( 540 - $(el) )) \
    --variant="$(defs l)" --variant="$(defs c)" > $R/race.txt 2>&1
echo "race hunt rc $? at $(el) s" | tee -a $R/time.txt
tail -8 $R/race.txt | tee -a $R/time.txt
