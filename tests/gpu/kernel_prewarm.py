"""Fill CuPy's kernel cache for a GPU test run before the run itself.

A cold build of the persistent kernel takes ~10 s a configuration on the GPU machine's host,
and the engine test file uses ~35 of them: most of a cold run (418 s of it on an H200,
bench/results/gpu/session14). NVRTC compiles on one core, so the test ids are split into
shards run side by side, each test ending (skipped) once its first kernel is compiled; the
real, serial run that follows then finds them in the cache (202 s, after 108 s of this).

    python3 -P tests/gpu/kernel_prewarm.py --shards 8 -- tests/gpu/test_engine_gpu.py

As a pytest plugin (``-p kernel_prewarm``, with this folder on PYTHONPATH) it is what each
shard runs under. A test that builds a second configuration builds it in the real run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PYTEST = [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
          f"--confcutdir={HERE}"]  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    """Under ``-p kernel_prewarm``: the engine's kernel loader compiles, then skips the test."""
    import dcsm.gpu.engine as engine

    load = engine.load_kernel

    def compile_then_skip(config):  # type: ignore[no-untyped-def]
        load(config)
        pytest.skip("kernel_prewarm: kernel compiled")

    engine.load_kernel = compile_then_skip


def collect_ids(args: list[str]) -> list[str]:
    """The ids pytest collects for ``args``."""
    out = subprocess.run([*PYTEST, "--collect-only", *args], capture_output=True, text=True)
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    if out.returncode != 0 or not ids:
        raise SystemExit(f"kernel_prewarm: collecting {args} failed:\n{out.stdout}{out.stderr}")
    return ids


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shards", type=int, default=8, help="pytest processes side by side")
    ap.add_argument("--timeout", type=float, default=240, help="seconds, for all of them")
    ap.add_argument("--logs", type=Path, help="each shard's output to LOGS/prewarm-N.log")
    ap.add_argument("args", nargs="*", help="pytest arguments (after --)")
    a = ap.parse_args()
    ids = collect_ids(a.args or [str(HERE)])
    path = [str(HERE), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
    if a.logs:
        a.logs.mkdir(parents=True, exist_ok=True)
    t0, procs = time.monotonic(), []
    for i in range(max(1, a.shards)):
        shard = ids[i :: a.shards]
        if not shard:
            continue
        log = open(a.logs / f"prewarm-{i}.log", "w") if a.logs else subprocess.DEVNULL
        procs.append(subprocess.Popen([*PYTEST, "-p", "kernel_prewarm", *shard], env=env,
                                      stdout=log, stderr=subprocess.STDOUT))  # fmt: skip
    failed = 0
    for p in procs:
        try:
            # pytest exits 0 when every test ends skipped, 5 when none was collected.
            failed += p.wait(timeout=max(1.0, a.timeout - (time.monotonic() - t0))) not in (0, 5)
        except subprocess.TimeoutExpired:
            p.kill()
            failed += 1
    print(f"kernel_prewarm: {len(ids)} tests in {len(procs)} shards, "
          f"{time.monotonic() - t0:.0f} s, {failed} shards failed")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
