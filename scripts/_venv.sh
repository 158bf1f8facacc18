# Sourced by scripts/demo.sh and scripts/test.sh: make sure .venv exists (created with the
# first Python >= 3.11 found: $PYTHON, python3, python3.11, python3.12, python3.13) and that
# the package is installed in it, editable, with the extras given as $1 (e.g. "[test]").

find_python() {
    local c
    for c in "${PYTHON:-}" python3 python3.11 python3.12 python3.13 python; do
        [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$c"
            return 0
        fi
    done
    echo "dcsm needs Python 3.11 or newer; none found (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

ensure_venv() {
    local extras=${1:-}
    if [ ! -x .venv/bin/python ]; then
        local py
        py=$(find_python) || exit 1
        echo "creating .venv with $($py --version 2>&1)" >&2
        "$py" -m venv .venv
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
}
