#!/usr/bin/env bash
# The live page's browser test, and the screenshot committed as docs/live-page.png: installs
# Chromium where it is missing (scripts/install-chromium.sh), runs `dcsm demo`, loads its
# page at / in headless Chromium, checks that the queries, their matches, the charts, the
# form and /docs work, and saves the page as it looked.
#
#   bash scripts/live-page.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-chromium.sh
source scripts/_venv.sh
ensure_venv "[test]"
mkdir -p docs
DCSM_SCREENSHOT="$PWD/docs/live-page.png" .venv/bin/python -m pytest -q -n 0 -s \
    tests/browser/test_live_page.py
echo "screenshot: docs/live-page.png"
