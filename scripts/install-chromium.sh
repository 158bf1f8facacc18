#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the live page's browser test
# (tests/browser/test_live_page.py), which skips with this script's name where it is absent.
# Idempotent: does nothing when /usr/bin/chromium is already there. Needs root or sudo and
# an apt source (Debian/Ubuntu).
#
#   bash scripts/install-chromium.sh
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium.sh needs apt-get (Debian/Ubuntu); install Chromium by hand" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-chromium.sh: run as root or install sudo" >&2; exit 1; }
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
