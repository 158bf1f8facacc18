#!/usr/bin/env bash
# The whole GPU test suite plus the GPU benchmark, in one call, on a machine with CuPy and a
# CUDA device. Results (test log, junit xml, benchmark tables, GC pool trace) go to
# $DCSM_RESULTS (default: bench/results/gpu), to be committed with the code they measured.
#
#   bash scripts/gpu-suite.sh            # tests + benchmark
#   bash scripts/gpu-suite.sh --tests    # tests only
#   bash scripts/gpu-suite.sh --bench    # benchmark only
#   bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py   # some of the tests
#
# Tests after --tests (paths or pytest options) replace tests/gpu. The whole suite took 512 s
# of its 540 s limit on an H200 on 2026-11-28 (208 tests; 170 took 377 s the run before), so
# it may need two device calls, each with its own $DCSM_RESULTS:
#   bash scripts/gpu-suite.sh --tests tests/gpu/test_engine_gpu.py               # 437 s
#   bash scripts/gpu-suite.sh --tests tests/gpu --ignore=tests/gpu/test_engine_gpu.py
#
# DCSM_PREWARM=N (e.g. 8) first fills the kernel cache with N pytest processes side by side
# (tests/gpu/kernel_prewarm.py): a cold engine test file took 418 s, 108 + 202 s so.
# DCSM_SUITE_SECONDS (default 540) is the tests' whole budget, prewarm included (at most
# half of it): set it below what is left of the device call, so that the suite, not the
# call, stops first. The log names every test that ran (-v), so a suite cut short still
# says which tests passed.
#
# Reference data: $DCSM_SHARED_DATA, else ../shared/data (tests that need it skip otherwise).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
shift $(( $# > 0 ? 1 : 0 ))
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(tests/gpu)
export DCSM_RESULTS=${DCSM_RESULTS:-bench/results/gpu}
mkdir -p "$DCSM_RESULTS"
export PYTHONUNBUFFERED=1
budget=${DCSM_SUITE_SECONDS:-540}
if ! python3 -P -c "import dcsm.gpu.engine" 2>/dev/null; then
    site=$(mktemp -d)
    python3 -m pip install -q --no-deps --no-build-isolation --no-index --target "$site" . || exit 1
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$DCSM_RESULTS/device.txt"
status=0
if [ "$what" = all ] || [ "$what" = --tests ]; then
    # -P: never import the source folder in place of the installed package.
    # The limit leaves room under a device call's 600 s for the setup; --durations names
    # what to trim or split off when the suite gets close to it (above).
    if [ "${DCSM_PREWARM:-0}" -gt 0 ]; then
        python3 -P tests/gpu/kernel_prewarm.py --shards "$DCSM_PREWARM" --timeout $(( budget / 2 < 200 ? budget / 2 : 200 )) \
            --logs "$DCSM_RESULTS/prewarm" -- "${tests[@]}" | tee "$DCSM_RESULTS/prewarm.log"
    fi
    timeout -k 10 $(( budget - SECONDS )) python3 -P -m pytest "${tests[@]}" -x -v -p no:cacheprovider --confcutdir=tests/gpu \
        --timeout 240 --durations 15 --junitxml="$DCSM_RESULTS/gpu-tests.xml" 2>&1 \
        | tee "$DCSM_RESULTS/gpu-tests.log"
    status=${PIPESTATUS[0]}
fi
if [ "$what" = all ] || [ "$what" = --bench ]; then
    timeout -k 10 540 python3 -P bench/gpu_bench.py --out "$DCSM_RESULTS" 2>&1 | tee "$DCSM_RESULTS/gpu-bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
exit $status
