#!/usr/bin/env bash
# Written in session 37 for the next one (never run): c1-modes.sh and c2-soft-cap.sh in one
# device call (one machine start, ~60 s, saved), the first part's turns until 260 s, the
# second's until 420, its race hunt until 560 (times raised in session 38). Carry: .dev28/shd.tar.xz (bench/device/README.md)
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session37/next/both.sh $R/
# (Session 38.) The five kernel builds both parts run, compiled side by side into CuPy's
# cache first (NVRTC takes one core and ~10 s a build; 16 cores here).
prewarm "16384|" "16384|-DRECORD_SM=1" "32768|" "32768|-DBATCH_SOFT=16384" \
        "32768|-DBATCH_SOFT=16384 -DBATCH_SOFT_ALL=24576"
MODES_UNTIL=260; source bench/results/gpu/session37/next/c1-modes.sh
SOFT_UNTIL=420; source bench/results/gpu/session37/next/c2-soft-cap.sh
