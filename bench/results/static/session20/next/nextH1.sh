#!/usr/bin/env bash
# Written in the twentieth session for the next one (not run): branch hub-rows
# (next/hub-rows.patch, `git am` on main): wedge_hubs at HUB_CHUNK 2 (43.0 against 55.9 ms
# at 8 in call 5), and a hub's u row part longer than HUB_LONG (2,048) queued for hub_rows,
# which walks it in segments of HUB_SEG (2,048) entries a warp; HUB_GROUP (1: off); and
# tailed_pairs and diamond_triangles on one triangle_rounds (session 20's duplicates D4).
# Compiled with nvcc 13 for sm_90 on the development host; it needs
#  1. the ring tests (test_four_cycles_alike_with_small_wedge_tables sets HUB_LONG 3 and
#     HUB_SEG 2, so that most hub rows go through the queue), then the whole static file;
#  2. the 20M 4-cycle's phases, main and the branch on one graph, and the 20M rings with the
#     CPU engine beside (the 50x: 42.0x on main in call 4).
# Prepare: the branch's tree as .devrun/b (git archive, without bench/results and docs), a
# kernel cache as .devrun/cupy-cache.tgz.aa. Carry: .devrun
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    -k "ring or triangles_stay or four_cycles or hub_roots" > $R/tests-b.log 2>&1); echo "branch ring tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
PYTHONPATH=/tmp/b timeout -k 5 100 python3 -P .devrun/b/bench/debug/label_count_ab.py --edges 20000000 --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 3 --phases --write-graph /tmp/g20.npz --out $R/ab20-b.json > $R/ab20-b.log 2>&1
echo "ab20 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-b.log | tee -a $R/time.txt
PYTHONPATH=/tmp/m timeout -k 5 60 python3 -P bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 3 --phases --out $R/ab20-m.json > $R/ab20-m.log 2>&1
echo "ab20 main rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-m.log | tee -a $R/time.txt
# Which part gains: bench/debug/hub_item_model.py (list scheduling of the 20M graph's hub
# items on 6,336 warps, ../hub-model-20m.json) puts HUB_CHUNK 2 near balance already, so the
# queue may add nothing there; b-nolong: no queue (HUB_LONG past any row); b-c1: HUB_CHUNK 1;
# b-g8: HUB_GROUP 8 (eight hubs' items scattered: contention on popular words, measured
# only with the longest items holding the phase, at HUB_CHUNK 8, in session 20).
for v in nolong c1 g8; do rm -rf /tmp/s$v; cp -r .devrun/b /tmp/s$v
  [ $v = g8 ] && sed -i 's/^#define HUB_GROUP 1$/#define HUB_GROUP 8/' /tmp/s$v/gpu/ring_count.cuh
  [ $v = nolong ] && sed -i 's/^#define HUB_LONG 2048$/#define HUB_LONG (1ll << 40)/' /tmp/s$v/gpu/ring_count.cuh
  [ $v = c1 ] && sed -i 's/^HUB_CHUNK = 2$/HUB_CHUNK = 1/' /tmp/s$v/gpu/label_count.py
  (cd /tmp/s$v && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b$v . >/dev/null 2>&1) || exit 1
  PYTHONPATH=/tmp/b$v timeout -k 5 60 python3 -P .devrun/b/bench/debug/label_count_ab.py --graph /tmp/g20.npz --labels 1 \
    --variants 512:16 --patterns cycle4 --repeat 3 --phases --out $R/ab20-$v.json > $R/ab20-$v.log 2>&1
  echo "ab20 $v rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab20-$v.log | tee -a $R/time.txt; done
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 130 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
    --chunglu-shapes cycle4,diamond,tailed4 --cpu-max-edges 30000000 --out $R/cl20-b.json > $R/cl20-b.log 2>&1)
echo "20M rings with the CPU rc $? at $(el) s" | tee -a $R/time.txt; grep -E "cycle4|diamond|tailed4" $R/cl20-b.md | tee -a $R/time.txt
# At 43M edges the 16 GiB budget holds 1,784 hubs, and wedge_parts walks the big roots below
# them in many parts (247.7 ms of the 0.385 s 4-cycle in call 3): a 32 GiB budget (more
# hubs) beside the default, on the branch, as the time allows.
[ $(el) -lt 430 ] && { PYTHONPATH=/tmp/b timeout -k 5 $(( 560 - $(el) )) python3 -P .devrun/b/bench/debug/label_count_ab.py \
    --edges 43000000 --labels 1 --variants 512:16,512:32 --patterns cycle4 --repeat 2 --phases --out $R/ab43-b.json > $R/ab43-b.log 2>&1
  echo "ab43 branch rc $? at $(el) s" | tee -a $R/time.txt; cat $R/ab43-b.log | tee -a $R/time.txt; }
