#!/usr/bin/env bash
# The whole GPU test suite plus the GPU benchmark, in one call, on a machine with CuPy and a
# CUDA device. Results (test log, junit xml, benchmark tables, GC pool trace) go to
# $DCSM_RESULTS (default: bench/results/gpu), to be committed with the code they measured.
#
#   bash scripts/gpu-suite.sh            # tests + benchmark
#   bash scripts/gpu-suite.sh --tests    # tests only
#   bash scripts/gpu-suite.sh --bench    # benchmark only
#
# Reference data: $DCSM_SHARED_DATA, else ../shared/data (tests that need it skip otherwise).
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
export DCSM_RESULTS=${DCSM_RESULTS:-bench/results/gpu}
mkdir -p "$DCSM_RESULTS"
export PYTHONUNBUFFERED=1
if ! python3 -P -c "import dcsm.gpu.engine" 2>/dev/null; then
    site=$(mktemp -d)
    python3 -m pip install -q --no-deps --no-build-isolation --no-index --target "$site" . || exit 1
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$DCSM_RESULTS/device.txt"
status=0
if [ "$what" = all ] || [ "$what" = --tests ]; then
    # -P: never import the source folder in place of the installed package.
    # 170 tests took 377 s on an H200 (2026-11-28): the limit leaves room under a device
    # call's 600 s for the setup; --durations names what to trim when it gets close.
    timeout -k 10 540 python3 -P -m pytest tests/gpu -x -q -p no:cacheprovider --confcutdir=tests/gpu \
        --timeout 240 --durations 15 --junitxml="$DCSM_RESULTS/gpu-tests.xml" 2>&1 \
        | tee "$DCSM_RESULTS/gpu-tests.log"
    status=${PIPESTATUS[0]}
fi
if [ "$what" = all ] || [ "$what" = --bench ]; then
    timeout -k 10 540 python3 -P bench/gpu_bench.py --out "$DCSM_RESULTS" 2>&1 | tee "$DCSM_RESULTS/gpu-bench.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
exit $status
