#!/usr/bin/env bash
# Sourced first by a device call's script, on the device machine, in the repository root:
#
#     NO_CACHE_BACK=1; source bench/device/common.sh
#
# What it sets up (each step idempotent, so two scripts of one call may both source it):
#   T0, el       the call's start and the seconds since (`[ $(el) -gt 300 ] && break`)
#   R            $OUT/r, the results folder; packed into $OUT/r.tgz when the call exits
#                (a call brings back at most 8 files: one archive holds them all)
#   /tmp/m       this checkout installed as the `dcsm` package (PYTHONPATH; again whenever the
#                sources differ from what a warm machine holds there); run scripts with
#                python3 -P so that the source folder never shadows it
#   /tmp/shd     ../shared/data, unpacked from .dev28/shd.tar.xz where the call carried it
#                (bench/device/pack-shared.sh makes it here); DCSM_SHARED_DATA points to it
#   CuPy's kernel cache in /tmp/cupy-cache: seeded from .dev28/cupy-cache.tgz.* where
#                carried, and sent back in 15 MiB parts unless NO_CACHE_BACK=1 (a stale
#                cache only misses: CuPy keys its entries by source, options and compiler)
# and $R/device.txt (the GPU, driver, CuPy), $R/files.md5 (the kernel and engine files run).
# prewarm "CAP|DEFINES" ... compiles the kernel builds a call will run side by side first.
# Nothing here is fetched code: the peers' binaries (.peers/bin) are built by hand, as
# bench/device/README.md says, and carried beside it.
set -u
if [ -z "${DCSM_DEVICE_COMMON:-}" ]; then
  DCSM_DEVICE_COMMON=1
  T0=$(date +%s)
  el() { echo $(( $(date +%s) - T0 )); }
  R=${OUT:?OUT is set on the device machine only}/r
  mkdir -p "$R"
  export PYTHONUNBUFFERED=1 CUPY_CACHE_DIR=/tmp/cupy-cache
  _repo=$PWD
  _finish() {
    cd "$OUT" || return
    tar czf r.tgz r && rm -rf r
    if [ "${NO_CACHE_BACK:-0}" != 1 ] && [ -d "$CUPY_CACHE_DIR" ]; then
      tar cz -C /tmp cupy-cache | split -b 15m - cupy-cache.tgz.
    fi
  }
  trap _finish EXIT
  if ls "$_repo"/.dev28/cupy-cache.tgz.* > /dev/null 2>&1; then
    cat "$_repo"/.dev28/cupy-cache.tgz.* | tar xz -C /tmp
  fi
  if [ -f .dev28/shd.tar.xz ]; then
    mkdir -p /tmp/shd && tar xJf .dev28/shd.tar.xz -C /tmp/shd
    export DCSM_SHARED_DATA=/tmp/shd
  fi
  # A warm machine keeps /tmp between calls: install again unless /tmp/m holds these very
  # sources (session 39's call 2 ran call 1's package, its layout.cuh a define behind).
  _stamp=$(find pyproject.toml dcsm gpu schemas service loadgen -type f \
             \( -name '*.py' -o -name '*.cu' -o -name '*.cuh' -o -name '*.toml' -o -path '*/static/*' \) \
             -print0 | sort -z | xargs -0 md5sum | md5sum | cut -d' ' -f1)
  if [ "$(cat /tmp/m/.stamp 2>/dev/null)" != "$_stamp" ]; then
    rm -rf /tmp/m
    python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/m . \
      > "$R/install.log" 2>&1 || { echo "installing the package failed: $R/install.log"; exit 1; }
    echo "$_stamp" > /tmp/m/.stamp
  fi
  export PYTHONPATH=/tmp/m${PYTHONPATH:+:$PYTHONPATH}
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c "import cupy; print('cupy', cupy.__version__, 'cuda', cupy.cuda.runtime.runtimeGetVersion())"
    nproc; } > "$R/device.txt" 2>&1
  # What ran, file by file (the device's copy of .git is the session's first snapshot, so
  # `git log` there names the same commit in every call: sessions 39-40 wrote it as head.txt).
  md5sum gpu/*.cu gpu/*.cuh gpu/*.py > "$R/files.md5"
  echo "setup at $(el) s" | tee -a "$R/time.txt"
fi

# prewarm "16384|" "32768|-DBATCH_SOFT=16384" ...: each build (batch cap, then extra -D
# options) compiled into CuPy's cache at once, side by side (NVRTC takes one core and ~10 s
# a build); a log each in $R.
prewarm() {
  local spec
  for spec in "$@"; do
    DCSM_KERNEL_DEFINES="${spec#*|}" python3 -P -c "from dcsm.gpu.loader import KernelConfig as K, load_kernel
load_kernel(K(batch_cap=${spec%%|*}, extra=K.extra_from_env()))" \
      > "$R/prewarm-$(echo "$spec" | tr -dc 'A-Za-z0-9_').log" 2>&1 &
  done
  wait
  echo "prewarmed at $(el) s" | tee -a "$R/time.txt"
}

# gpu_tests SECONDS TEST...: scripts/gpu-suite.sh on the tests named, within SECONDS from
# now (DCSM_PREWARM, PYTHONPATH as the caller sets them), into $R/tests; its last line and
# any failure in time.txt.
gpu_tests() {
  local seconds=$1; shift
  DCSM_SUITE_SECONDS=$seconds DCSM_RESULTS=$R/tests bash scripts/gpu-suite.sh --tests "$@" > "$R/tests.log" 2>&1
  echo "GPU tests rc $? at $(el) s: $(tail -1 "$R/tests/gpu-tests.log")" | tee -a "$R/time.txt"
  grep -E "FAILED|ERROR" "$R/tests/gpu-tests.log" | head -5 | tee -a "$R/time.txt"
}

# beside_rapidflow SECONDS: the 22 oracle count rows beside RapidFlow (.peers/bin/RapidFlow.out,
# carried) in the same call, into $R/oracle-rf; a line per row in time.txt.
beside_rapidflow() {
  timeout -k 5 "$1" python3 -P bench/gpu_bench.py --out "$R/oracle-rf" --data /tmp/shd --oracle-count-only \
      --skip-latency --repeat 5 --rapidflow .peers/bin/RapidFlow.out --rapidflow-limit 15 > "$R/oracle-rf.log" 2>&1
  echo "beside RapidFlow rc $? at $(el) s" | tee -a "$R/time.txt"
  grep -E "^\| (oracle|all)" "$R/oracle-rf/gpu_bench.md" | cut -d"|" -f3-5,8-10 | head -40 | tee -a "$R/time.txt"
}
