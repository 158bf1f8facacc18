#!/usr/bin/env bash
# Written in session 39 (no device time left; never run). p as the default, tried without
# committing it: the whole GPU suite on a copy of this checkout whose defaults are p's.
# p (gpu_bench --piece 8192 --batch-cap 32768) was lower than main in the turns of two
# sessions (session 37 call 3: light rows 12.46-12.74 against 13.29-13.80 ms; session 39
# call 4: 189.39 against 192.51 ms, 7 of 8 light rows lower). As defaults: KernelConfig's
# batch_cap 32768 (gpu/loader.py; the service's gpu_batch_cap follows it) and an unpaced
# apply's pieces n / 4 within [4096, 8192] (gpu/engine.py's _PIECES, _PIECE_MAX; a paced
# apply keeps pieces of _PIECE = 4096, so response time at low rates is unchanged).
# If the suite passes, the next call turns main against the copy and runs it beside
# RapidFlow (as session39/call4/c4.sh); then commit the two defaults.
# Carry: .dev28/shd.tar.xz (bench/device/README.md).
NO_CACHE_BACK=1; source bench/device/common.sh
cp bench/results/gpu/session39/next/c1-p-suite.sh $R/
rm -rf /tmp/pcand && mkdir -p /tmp/pcand && cp -r pyproject.toml README.md dcsm gpu schemas service loadgen /tmp/pcand/
sed -i 's/^    batch_cap: int = 16384$/    batch_cap: int = 32768/' /tmp/pcand/gpu/loader.py
sed -i 's/^_PIECE_MAX = 16384$/_PIECE_MAX = 8192/; s/^_PIECES = 16$/_PIECES = 4/' /tmp/pcand/gpu/engine.py
diff -r gpu /tmp/pcand/gpu > $R/candidate.diff
[ "$(grep -c '^[<>]' $R/candidate.diff)" = 6 ] || { echo "the candidate's edits did not apply: $R/candidate.diff"; exit 1; }
rm -rf /tmp/mp && (cd /tmp/pcand && python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/mp . \
    > $R/install-p.log 2>&1) || exit 1
# The tests import the package from PYTHONPATH (pytest -P): the candidate's.
PYTHONPATH=/tmp/mp DCSM_PREWARM=14 DCSM_SUITE_SECONDS=$(( 580 - $(el) )) DCSM_RESULTS=$R/tests \
    bash scripts/gpu-suite.sh --tests tests/gpu > $R/tests.log 2>&1
echo "GPU tests (p defaults) rc $? at $(el) s: $(tail -1 $R/tests/gpu-tests.log)" | tee -a $R/time.txt
grep -E "FAILED|ERROR" $R/tests/gpu-tests.log | head -5 | tee -a $R/time.txt
grep -cE " PASSED" $R/tests/gpu-tests.log | sed 's/^/passed lines: /' | tee -a $R/time.txt
