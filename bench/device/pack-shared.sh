#!/usr/bin/env bash
# Packs the reference data (../shared/data) into .dev28/shd.tar.xz, an ignored file that a
# device call carries (`carry: [".dev28/shd.tar.xz", ...]`) and bench/device/common.sh
# unpacks there: the device machine gets the checkout alone, never ../shared. The archive
# must never be committed (.gitignore ignores .dev28/).
set -euo pipefail
cd "$(dirname "$0")/../.."
src=${DCSM_SHARED_DATA:-../shared/data}
[ -f "$src/README.md" ] || { echo "no reference data at $src" >&2; exit 1; }
mkdir -p .dev28
tar cJf .dev28/shd.tar.xz -C "$src" .
ls -l .dev28/shd.tar.xz
