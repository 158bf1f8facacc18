"""Run a bench script with the slab pool policy's constants from the environment.

    python3 -P pool_run.py bench/debug/insert_profile.py --graph G --out X.json

POOL_HEADROOM, POOL_GROWTH and POOL_COMPACT set ``pools.HEADROOM``, ``GROWTH`` and
``COMPACT_SHARE`` (when the installed engine has it) before the script runs."""

import os
import runpy
import sys

import dcsm.gpu.pools as p

p.HEADROOM = float(os.environ.get("POOL_HEADROOM", p.HEADROOM))
p.GROWTH = float(os.environ.get("POOL_GROWTH", p.GROWTH))
if hasattr(p, "COMPACT_SHARE"):
    p.COMPACT_SHARE = float(os.environ.get("POOL_COMPACT", p.COMPACT_SHARE))
print("pools", p.HEADROOM, p.GROWTH, getattr(p, "COMPACT_SHARE", None), flush=True)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
