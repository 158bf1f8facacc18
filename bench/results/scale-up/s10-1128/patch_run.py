"""Run a bench script with module constants patched: PATCH='module:attr=value,...'."""

import os
import runpy
import sys

for item in filter(None, os.environ.get("PATCH", "").split(",")):
    mod, rest = item.split(":")
    attr, value = rest.split("=")
    m = __import__(mod, fromlist=[attr])
    setattr(m, attr, type(getattr(m, attr))(value))
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(script))
runpy.run_path(script, run_name="__main__")
