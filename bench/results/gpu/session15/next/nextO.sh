#!/usr/bin/env bash
# Written in the fifteenth session for the next one: admission prefetches the id table's
# slots 64 lookups ahead (d7182c0; host only: admit 32 -> 22 ns an update at 4.8M vertices on
# the development host). Since big pieces the 43M triangle's updater waits for the host's
# input 286 ms of 0.56 s (session15 call 3): the host path sets its pace.
#  1. The 43M triangle, main against 235e31d (before the prefetch, .base-np), in turns;
#  2. the host path on this host, both trees (bench/debug/host_path_cost.py);
#  3. the 4-cycle on main, and on branch next-kernel (nextN.sh: update slots checked once for
#     a run of records; the 4-cycle's slots are held by running matches, the case where
#     a far check fails; and MERGE_PREFETCH 2 and MERGE_SPEC 1 against the defaults there,
#     in turns: a merge keeping two rounds of the other list in flight, or loading a
#     window's first rounds beside its entries), and the triangle on next-kernel.
# Prepare: git archive --format=tar --prefix=.base-np/ 235e31d | tar x && rm -rf .base-np/bench/results .base-np/docs
#     git archive --format=tar --prefix=.base-nk/ next-kernel | tar x && rm -rf .base-nk/bench/results .base-nk/docs
# Copy into .devrun/ with ../../session14/common.sh as .devrun/common.sh.
# Carry: .devrun .whl-gpu .base-np .base-nk
source .devrun/common.sh
rm -rf /tmp/m /tmp/np /tmp/nk
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/nk .base-nk >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/np .base-np >/dev/null 2>&1 || exit 1
cp .devrun/nextO.sh $R/; nvidia-smi -L > $R/device.txt; cp bench/results/gpu/session13/call4/static43.json /tmp/static43.json
export PYTHONPATH=/tmp/m:/tmp/site
timeout 90 python3 -P -c "from dcsm.loadgen.gen_stream import chunglu_graph; from dcsm.graphio import write_graph; write_graph('/tmp/g43.npz', chunglu_graph(43000000, 4800000, gamma=2.3, seed=0))"
touch -d @1795916919.826114635 /tmp/g43.npz
echo "graph ready at $(el) s" | tee -a $R/time.txt
for v in m np; do
  PYTHONPATH=/tmp/$v:/tmp/site timeout -k 5 120 python3 -P bench/debug/host_path_cost.py --vertices 4800000 --updates 1048576 --piece 16384 --repeat 3 > $R/host-path-$v.txt 2>&1
  echo "host path $v: $(grep total $R/host-path-$v.txt)" | tee -a $R/time.txt
done
for run in "triangle m 1" "triangle np 1" "triangle m 2" "triangle np 2" "4cycle m 1" "4cycle nk 1" "4cycle nk 1 -DMERGE_PREFETCH=2" \
           "4cycle nk 1 -DMERGE_SPEC=1" "4cycle nk 2 -DMERGE_PREFETCH=2" "4cycle nk 2" "4cycle nk 2 -DMERGE_SPEC=1" \
           "triangle nk 1" "triangle m 3" "triangle np 3"; do
  set -- $run; d=${4:-}; tag=$1-$2$(echo "$d" | tr -d '=-')-$3; [ $(el) -gt 500 ] && break
  DCSM_KERNEL_DEFINES="$d" PYTHONPATH=/tmp/$2:/tmp/site timeout -k 5 100 python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns $1 \
      --batch-size 1048576 --static-cache /tmp/static43.json --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s: $(tail -1 $R/$tag.log)" | tee -a $R/time.txt
done
# 4. The triangle on main under py-spy (host): where the host's ~60-77 ns an update go now.
#    (session15 call 2's --rate 1000 --idle fell 53 s behind and hit its limit.)
SPY=/tmp/site/bin/py-spy
if [ -x $SPY ] && [ $(el) -lt 440 ]; then
  timeout -k 5 140 $SPY record --threads --rate 200 --nonblocking --format raw -o $R/triangle-spy.raw -- \
      python3 -P bench/scale_up_bench.py --backend gpu --graph /tmp/g43.npz --patterns triangle --batch-size 1048576 \
      --static-cache /tmp/static43.json --out $R/triangle-spy.json > $R/triangle-spy.log 2>&1
  echo "triangle under py-spy rc $? at $(el) s: $(tail -1 $R/triangle-spy.log)" | tee -a $R/time.txt
  [ -f $R/triangle-spy.raw ] && python3 -P bench/profile_summary.py $R/triangle-spy.raw --rate 200 --top 12 > $R/triangle-spy.md 2>&1
fi
