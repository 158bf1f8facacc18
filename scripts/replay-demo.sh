#!/usr/bin/env bash
# The offline demo (no service): a seeded synthetic power-law graph (20,000 vertices), split by the DCSM protocol
# into an initial graph and a stream of ~40,000 insertions and deletions, replayed through
# the matching engine with five patterns; then the first deltas of one pattern as JSON lines.
# Everything it writes goes to .devdata/demo (ignored by git).
#
#   bash scripts/replay-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
ensure_venv ""
dcsm=.venv/bin/dcsm
out=.devdata/demo
mkdir -p "$out"
q=examples/queries

echo "== 1. a synthetic power-law graph"
$dcsm gen-graph --vertices 20000 --edges-per-vertex 4 --seed 7 --out "$out/full.graph"
echo "== 2. DCSM protocol: 45% of the edges inserted by the stream, 5% deleted"
$dcsm gen-stream --graph "$out/full.graph" --out "$out" --seed 7 --rate 10000
echo "== 3. static matches in the initial graph"
$dcsm match --graph "$out/initial.graph" --query $q/triangle --query $q/4clique \
    --query $q/wedge_any.json
echo "== 4. replay the stream (first run compiles the engine; later runs are faster)"
$dcsm replay --graph "$out/initial.graph" --updates "$out/stream.updates" \
    --query $q/triangle --query $q/4cycle --query $q/diamond --query $q/4clique --query $q/house
echo "== 5. every triangle delta as a JSON line"
$dcsm replay --graph "$out/initial.graph" --updates "$out/stream.updates" \
    --query $q/triangle --emit "$out/triangle.jsonl" --json
echo "$(wc -l < "$out/triangle.jsonl") lines in $out/triangle.jsonl, the first three:"
head -n 3 "$out/triangle.jsonl"
