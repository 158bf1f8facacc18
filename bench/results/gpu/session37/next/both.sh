#!/usr/bin/env bash
# Written in session 37 for the next one (never run): c1-modes.sh and c2-soft-cap.sh in one
# device call (one machine start, ~60 s, saved), the first part's turns until 230 s, the
# second's until 400, its race hunt until 560 (times raised in session 38). Carry: .dev28/shd.tar.xz (bench/device/README.md)
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session37/next/both.sh $R/
MODES_UNTIL=230; source bench/results/gpu/session37/next/c1-modes.sh
SOFT_UNTIL=400; source bench/results/gpu/session37/next/c2-soft-cap.sh
