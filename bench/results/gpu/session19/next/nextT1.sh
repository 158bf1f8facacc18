#!/usr/bin/env bash
# Written in the nineteenth session for the next one (not run): branch shared-pairs
# (next/shared-pairs.patch, `git am` on main): diamond_pairs and tailed_pairs share one pair
# walk (ring_count.cuh walk_pairs), the duplicated ~25 lines gone. Same registers and shared
# memory with nvcc 13 for sm_90 (checked on the development host); it needs
#  1. the ring tests (every ring against the CPU engine and the search, slices too);
#  2. the 20M diamond and tailed triangle, main and the branch in turns (5.6 ms and ~92 ms
#     on main in session 19).
# Prepare: the branch's tree as .devrun/b (git archive), a kernel cache as .devrun/cupy-cache.tgz.aa.
# Carry: .devrun
source .devrun/common-nowhl.sh
rm -rf /tmp/m /tmp/b
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . >/dev/null 2>&1 || exit 1
(cd .devrun/b && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/b . >/dev/null 2>&1) || exit 1
(cd .devrun/b && PYTHONPATH=/tmp/b timeout -k 5 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_gpu_static.py \
    -k "ring or triangles_stay" > $R/tests-b.log 2>&1); echo "branch ring tests rc $? at $(el) s: $(tail -1 $R/tests-b.log)" | tee -a $R/time.txt
for run in "m 1" "b 1" "m 2" "b 2"; do
  set -- $run; t=$1
  PYTHONPATH=/tmp/$t timeout -k 5 120 python3 -P bench/static_bench.py --sets "" --chunglu-edges 20000000 \
      --chunglu-shapes diamond,tailed4 --no-cpu --out $R/rings-$t-$2.json > $R/rings-$t-$2.log 2>&1
  echo "$t $2 rc $? at $(el) s" | tee -a $R/time.txt; grep -E "diamond|tailed4" $R/rings-$t-$2.md | cut -d'|' -f3,9 | tee -a $R/time.txt
done
