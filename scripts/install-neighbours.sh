#!/usr/bin/env bash
# Installs the "neighbour" tools that tests/neighbours/ drive against a real service, where
# they are missing (running it again changes nothing):
#
#   kcat             Debian package kcat (librdkafka's command-line producer/consumer)
#   prometheus       Debian package prometheus (the server; it ships promtool too)
#   confluent-kafka  pip, into .venv (librdkafka's Python client; a binary wheel)
#
#   bash scripts/install-neighbours.sh
#
# The Debian packages need root (or sudo) and apt; without them this says what is missing
# and the tests that need it skip, naming this script. Nothing here starts a daemon: where
# no policy-rc.d stops package services from starting (as in containers), one is put in
# place for the install and removed after, so the prometheus package does not start its
# own server on :9090. The tests run prometheus themselves, on loopback ports only.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
    missing+=(prometheus)
fi

if [ ${#missing[@]} -gt 0 ]; then
    as_root=()
    can_root=1
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            as_root=(sudo)
        else
            echo "install-neighbours: need root or sudo for apt-get install ${missing[*]}" >&2
            can_root=0
        fi
    fi
    if [ "$can_root" -eq 1 ]; then
        policy=/usr/sbin/policy-rc.d
        placed=0
        if [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
            "${as_root[@]}" chmod 755 "$policy"
            placed=1
        fi
        cleanup() { [ "$placed" -eq 1 ] && "${as_root[@]}" rm -f "$policy"; return 0; }
        trap cleanup EXIT
        # Another apt run (another user, unattended upgrades) may hold the lock: wait for it.
        apt=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600)
        if ! "${as_root[@]}" "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; then
            "${as_root[@]}" "${apt[@]}" update
            "${as_root[@]}" "${apt[@]}" install -y --no-install-recommends "${missing[@]}"
        fi
    fi
fi

if [ -x .venv/bin/python ]; then
    if ! .venv/bin/python -c 'import confluent_kafka' >/dev/null 2>&1; then
        # A binary wheel only: no compiler, no librdkafka headers needed.
        .venv/bin/python -m pip install --quiet --disable-pip-version-check \
            --only-binary confluent-kafka confluent-kafka
    fi
else
    echo "install-neighbours: no .venv here (bash scripts/test.sh creates it); confluent-kafka not installed" >&2
fi

for tool in kcat prometheus promtool; do
    if command -v "$tool" >/dev/null 2>&1; then
        printf '%-16s %s\n' "$tool" "$(command -v "$tool")"
    else
        printf '%-16s missing\n' "$tool"
    fi
done
if [ -x .venv/bin/python ]; then
    printf '%-16s %s\n' confluent-kafka \
        "$(.venv/bin/python -c 'import confluent_kafka as c; v = c.version(); print(v if isinstance(v, str) else v[0], "librdkafka", c.libversion()[0])' 2>/dev/null || echo missing)"
fi
# Debian bookworm's kcat comes with librdkafka 2.0.2, which misreads the tagged fields tansu
# sends in ApiVersions responses (fixed in librdkafka 2.2.0, confluentinc/librdkafka#4278);
# tests/neighbours/test_kcat.py then runs kcat on confluent-kafka's bundled librdkafka.
if command -v kcat >/dev/null 2>&1; then
    rdk=$(kcat -V 2>&1 | sed -n 's/.*librdkafka \([0-9][0-9.]*\).*/\1/p' | head -n 1)
    if [ -n "$rdk" ] && [ "$(printf '%s\n2.2.0\n' "$rdk" | sort -V | head -n 1)" != 2.2.0 ]; then
        echo "note: kcat uses librdkafka $rdk (< 2.2.0: cannot talk to tansu by itself; the kcat test uses confluent-kafka's librdkafka)"
    fi
fi
