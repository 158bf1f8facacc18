#!/usr/bin/env bash
# Written in session 37 for the next one (never run): c1-modes.sh and c2-soft-cap.sh in one
# device call (one machine start, ~60 s, saved), the first part's turns until 260 s, the
# second's until 420, its race hunt until 560 (times raised in session 38). Carry: .dev28/shd.tar.xz (bench/device/README.md)
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session37/next/both.sh $R/
# (Session 38.) The five kernel builds both parts run, compiled side by side into CuPy's
# cache first (NVRTC takes one core and ~10 s a build; 16 cores here).
for spec in "16384|" "16384|-DRECORD_SM=1" "32768|" "32768|-DBATCH_SOFT=16384" \
            "32768|-DBATCH_SOFT=16384 -DBATCH_SOFT_ALL=24576"; do
  DCSM_KERNEL_DEFINES="${spec#*|}" python3 -P -c "from dcsm.gpu.loader import KernelConfig as K, load_kernel
load_kernel(K(batch_cap=${spec%%|*}, extra=K.extra_from_env()))" > $R/prewarm-${spec%%|*}-$(echo ${spec#*|} | tr -dc 'A-Z0-9_').log 2>&1 &
done; wait
echo "prewarmed at $(el) s: $(ls $CUPY_CACHE_DIR | wc -l) cache files" | tee -a $R/time.txt
MODES_UNTIL=260; source bench/results/gpu/session37/next/c1-modes.sh
SOFT_UNTIL=420; source bench/results/gpu/session37/next/c2-soft-cap.sh
