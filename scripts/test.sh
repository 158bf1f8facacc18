#!/usr/bin/env bash
# The whole test suite, as CI runs it: creates .venv if missing, installs the package with
# its test extras, checks the code with ruff and the service's types with mypy, runs pytest on
# two workers. Extra arguments go to pytest.
#
#   bash scripts/test.sh                 # everything (GPU tests skip without a GPU)
#   bash scripts/test.sh tests/engine    # one folder
#
# Tests that need the reference data look in $DCSM_SHARED_DATA, else ../shared/data, and
# skip (with the reason) where it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh
ensure_venv "[test]"
.venv/bin/ruff check . --quiet
.venv/bin/mypy service/
exec .venv/bin/python -m pytest -n 2 "$@"
