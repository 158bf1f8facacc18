#!/usr/bin/env bash
# Session 21 call 4, main's final code (f072b5d: wedge_hubs at HUB_CHUNK 2 with hub_rows
# for long rows, and byte counters below 16-bit ones in a hub's narrow array):
#  1. the static tests of the rings and 4-cycles, and the published static counts
#     (tests/gpu/test_gpu_static.py; the whole file passed on the same code in call 2, but
#     for the published counts, whose data that call did not carry);
#  2. issue 18's static rows beside gMatch and EGSM (built from their public source on the
#     development host, bench/results/static/README.md "Building the peers yourself"), same
#     host, same call, the CPU engine on this host's 16 cores beside for the 50x target:
#     Chung-Lu 20M rings (cycle4, diamond, tailed4) with the CPU; triangle and clique4
#     without it; enron; citeseer; oracle-github (no CPU), as the time allows.
# Prepare: .devst4 (peers; citeseer, enron, oracle-github full graph and queries: copies of
#   ../shared), call 3's kernel cache as .devrun/cupy-cache.tgz.aa. Carry: .devrun .devst4
source .devrun/common-nowhl.sh
rm -rf /tmp/m; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
cp .devrun/s21c4.sh $R/; nvidia-smi -L > $R/device.txt; md5sum gpu/*.cu gpu/*.cuh gpu/*.py > $R/files.md5
export PYTHONPATH=/tmp/m DCSM_SHARED_DATA=$PWD/.devst4/sh
echo "installed at $(el) s" | tee -a $R/time.txt
timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py -k "ring or triangles_stay or four_cycles or hub_roots or published" > $R/tests.log 2>&1
echo "ring tests rc $? at $(el) s: $(tail -1 $R/tests.log)" | tee -a $R/time.txt
grep -E "FAILED|Error|SKIP" $R/tests.log | head -10 | tee -a $R/time.txt
P="--gmatch .devst4/peers/gmatch --gmatch-unlabeled .devst4/peers/gmatch-unlabeled --egsm .devst4/peers/egsm"
run() { local tag=$1 lim=$2; shift 2; [ $(( $(el) + 25 )) -gt 575 ] && { echo "$tag skipped at $(el) s" | tee -a $R/time.txt; return; }
  timeout -k 5 $(( lim < 575 - $(el) ? lim : 575 - $(el) )) python3 -P bench/static_bench.py "$@" $P --out $R/$tag.json > $R/$tag.log 2>&1
  echo "$tag rc $? at $(el) s" | tee -a $R/time.txt; [ -f $R/$tag.md ] && grep "^| " $R/$tag.md | tail -n +3 | cut -d'|' -f2-3,6,9,12-16 | tee -a $R/time.txt; }
run chunglu-20m-rings 170 --sets "" --chunglu-edges 20000000 --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --peer-limit 40
run chunglu-20m-search 100 --sets "" --chunglu-edges 20000000 --chunglu-shapes triangle,clique4 --no-cpu --peer-limit 40
run enron 130 --data .devst4/sh --sets enron --peer-limit 20
run citeseer 70 --data .devst4/sh --sets citeseer --peer-limit 30
run oracle-github 100 --data .devst4/sh --sets oracle-github --cpu-max-edges 0 --peer-limit 20
