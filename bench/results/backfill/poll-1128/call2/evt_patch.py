"""Turn an installed copy's polled waits into a blocking-sync event wait (experiment only)."""

import sys

p = sys.argv[1] + "/dcsm/gpu/static_match.py"
s = open(p).read()
old = """            done = self._cp.cuda.Event(block=False, disable_timing=True)
            done.record(self.stream)
            pause = 1e-5
            while not done.done:
                time.sleep(pause)
                pause = min(2 * pause, 1e-3)
"""
new = """            done = self._cp.cuda.Event(block=True, disable_timing=True)
            done.record(self.stream)
            done.synchronize()
"""
assert old in s, "pattern not found"
open(p, "w").write(s.replace(old, new))
print("patched", p)
