"""Run a script with module attributes set from the environment first.

    PATCH=dcsm.gpu.engine:_PIECE=16384 python3 -P patch_run.py bench/gpu_bench.py ...

PATCH is a comma-separated list of ``module:attribute=integer``."""

import importlib
import os
import runpy
import sys

for item in filter(None, os.environ.get("PATCH", "").split(",")):
    mod, rest = item.split(":")
    attr, val = rest.split("=")
    setattr(importlib.import_module(mod), attr, int(val))
    print("patched", mod, attr, val, flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
