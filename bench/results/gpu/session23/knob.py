"""Run a bench script with GpuEngine keyword defaults changed:
knob.py [k=v ...] -- bench/script.py args"""

import runpy
import sys

import dcsm.gpu.engine as e

i = sys.argv.index("--")
for kv in sys.argv[1:i]:
    k, v = kv.split("=")
    e.GpuEngine.__init__.__kwdefaults__[k] = int(v)
sys.argv = sys.argv[i + 1 :]
runpy.run_path(sys.argv[0], run_name="__main__")
