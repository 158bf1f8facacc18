#!/usr/bin/env bash
# Session 18 call 3, main (start-overlap merged) and branch ring-publish (1d555ef: only
# gpu/input_ring.py differs, carried as .devst/input_ring.py):
#  1. the response rows (gpu_bench.py --skip-search --sustain-updates 0), main and the branch
#     in turns, two each; the oracle count rows on the branch (its short writes' fast path,
#     counts checked against the published ones);
#  2. issue 18's static rows on main beside gMatch and EGSM (built from their public source
#     on the development host, bench/results/static/README.md "Building the peers
#     yourself"), same host, same call: citeseer, oracle-github, enron (the CPU engine on
#     this host's 16 cores beside, for the 50x target), Chung-Lu 20M (no CPU: rings-1128).
# Prepare: .devst/sh (citeseer, oracle-github, enron/unlabeled initial.graph + queries:
#   copies of ../shared), .devst/peers (the three binaries), .devst/input_ring.py, the kernel
#   cache of session 17's last call as .devrun/cupy-cache.tgz.aa. Carry: .devrun .devst
source .devst/common-st.sh  # ../session16/common.sh less the install of .whl-gpu (no wheel of it is needed here)
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
rm -rf /tmp/b; cp -r /tmp/m /tmp/b; cp .devst/input_ring.py /tmp/b/dcsm/gpu/input_ring.py
cp .devst/s18c3.sh $R/; nvidia-smi -L > $R/device.txt; git log -1 --format=%H > $R/head.txt 2>/dev/null
for turn in 1 2; do for t in m b; do
  PYTHONPATH=/tmp/$t:/tmp/site timeout -k 5 100 python3 -P bench/gpu_bench.py --out $R/lat-$t$turn --data .devst/sh --skip-search --sustain-updates 0 > $R/lat-$t$turn.log 2>&1
  echo "latency $t turn $turn rc $? at $(el) s" | tee -a $R/time.txt
  grep -E "t=0\)" $R/lat-$t$turn/gpu_bench.md | head -3 | cut -d'|' -f2-6 | tee -a $R/time.txt
done; done
PYTHONPATH=/tmp/b:/tmp/site timeout -k 5 60 python3 -P bench/gpu_bench.py --out $R/oracle-b --data .devst/sh --oracle-count-only --skip-latency > $R/oracle-b.log 2>&1
echo "oracle rows on the branch rc $? at $(el) s" | tee -a $R/time.txt
python3 -c "import json; r=[x for x in json.load(open('$R/oracle-b/gpu_bench.json'))['search'] if x['query']!='all at once']; print(len(r), 'rows', round(sum(x['seconds'] for x in r),4), 's, equal to the published:', sum(x.get('peer_matches')==x['matches'] for x in r))" 2>&1 | tee -a $R/time.txt
export PYTHONPATH=/tmp/m:/tmp/site
P="--gmatch .devst/peers/gmatch --gmatch-unlabeled .devst/peers/gmatch-unlabeled --egsm .devst/peers/egsm"
run() { local tag=$1 lim=$2; shift 2; [ $(( $(el) + 20 )) -gt 570 ] && return
  timeout -k 5 $(( lim < 570 - $(el) ? lim : 570 - $(el) )) python3 -P bench/static_bench.py "$@" $P --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s" | tee -a $R/time.txt; }
run citeseer 80 --data .devst/sh --sets citeseer --peer-limit 30
run oracle-github 110 --data .devst/sh --sets oracle-github --cpu-max-edges 0 --peer-limit 20
run enron 130 --data .devst/sh --sets enron --peer-limit 20
run chunglu-20m 200 --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,clique4,cycle4,diamond --no-cpu --peer-limit 40
