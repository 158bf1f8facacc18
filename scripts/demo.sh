#!/usr/bin/env bash
# The demo: the streaming service on the embedded defaults (CPU engine unless a GPU and CuPy
# are present, a loopback Kafka-protocol broker started for the occasion). It registers a few
# patterns, streams a seeded synthetic power-law graph through Kafka, and shows live matches,
# throughput and latency percentiles; then it stops everything cleanly. Options go to
# `dcsm demo` (see `.venv/bin/dcsm demo --help`), e.g. --rate 5000 --duration 30.
#
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
ensure_venv ""
exec .venv/bin/dcsm demo "$@"
