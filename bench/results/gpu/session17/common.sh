# Sourced by the call scripts (session16: the cache in parts): elapsed time, results under $OUT/r (tarred to
# r.tgz at exit), and CuPy's kernel cache carried from call to call: restored from
# .devrun/cupy-cache.tgz when the call brought one, written back to $OUT/cupy-cache.tgz at
# exit (copy it to .devrun/ for the next call: a kernel built once is not built again, a
# cold build being ~10 s a config and the engine test file's ~35 configs most of its 485 s).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
export CUPY_CACHE_DIR=/tmp/cupy-cache; mkdir -p $CUPY_CACHE_DIR
# the cache comes back in parts of 15 MiB (a file back from $OUT is at most 16 MiB)
ls .devrun/cupy-cache.tgz* >/dev/null 2>&1 && cat .devrun/cupy-cache.tgz* | tar xz -C $CUPY_CACHE_DIR
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; [ -n "${NO_CACHE_BACK:-}" ] && return; tar cz -C $CUPY_CACHE_DIR . | split -b 15m - $OUT/cupy-cache.tgz.; }
trap finish EXIT
export PYTHONUNBUFFERED=1
[ -d /tmp/site/cupy ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl-gpu/*.whl || exit 1
echo "cupy cache: $(ls $CUPY_CACHE_DIR | wc -l) files at start" > $R/cache.txt
