#!/usr/bin/env bash
# Session 41, call 5, written here after it ran: the command was typed into the device tool
# on the machine call 4 left warm (180 s of device time left, under a fresh start's 240 s).
# Three runs of the 22 oracle count rows, each between two reads of /proc/stat's cpu lines
# (the 8th number is steal time, in jiffies). Carry: .dev28/shd.tar.xz
NO_CACHE_BACK=1; source bench/device/common.sh; for t in 1 2 3; do grep -E "^cpu " /proc/stat > $R/stat-$t-a.txt; timeout 40 python3 -P bench/gpu_bench.py --out $R/t$t --data /tmp/shd --oracle-count-only --skip-latency --repeat 5 > $R/t$t.log 2>&1; grep -E "^cpu" /proc/stat > $R/stat-$t-b.txt; echo "t$t at $(el) s: $(head -1 $R/stat-$t-a.txt) -> $(head -1 $R/stat-$t-b.txt)"; python3 -c "
import json; d={(r['query'],r['stream']):r for r in json.load(open('$R/t$t/gpu_bench.json'))['search']}
print(' '.join(f\"{q}/{s[:3]} {1e3*d[(q,s)]['seconds']:.2f}\" for q in ('Q_1','Q_7') for s in ('insertion10','deletion10')))"; done; cat /proc/cpuinfo | grep -m3 -E "MHz|flags" | cut -c1-200
