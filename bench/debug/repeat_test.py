"""Run one GPU test function N times in one process and count the failures (a flaky test
tells a race from a deterministic bug this way).

    python3 -P bench/debug/repeat_test.py tests/gpu/test_engine_gpu.py \
        test_pool_backpressure_and_recovery 5
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path


def main() -> None:
    path, name, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    failed = 0
    for i in range(n):
        try:
            getattr(mod, name)()
        except AssertionError:
            failed += 1
            print(f"run {i}: FAILED", traceback.format_exc().splitlines()[-1][:200], flush=True)
    print(f"{name}: {failed} of {n} runs failed", flush=True)


if __name__ == "__main__":
    main()
