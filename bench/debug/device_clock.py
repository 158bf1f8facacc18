"""How the device's %globaltimer (the clock of every time the persistent kernel records)
relates to the host's ``time.time_ns``: its tick, and its offset and drift over a run.

One thread spins on %globaltimer and writes each new value into pinned host memory while
the host reads that word between two reads of its own clock, over ``--seconds``. A value
the host reads was written before its second clock read and, as the device writes every
tick, at most one tick (plus the write's trip) before its first. The output gives the
tick (distinct steps of the timer, from the device's own log), and per tenth of the run
the offset (host minus device) bounded from above by the tightest sample, so a drift of
the two clocks shows as a trend between tenths.

    python3 -P bench/debug/device_clock.py [--seconds 2] [--out clock.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

SOURCE = r"""
extern "C" __global__ void clock_spin(volatile unsigned long long* out,
                                      volatile const int* stop,
                                      unsigned long long* steps, int nsteps) {
    unsigned long long last = 0, t;
    int n = 0;
    while (!*stop) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t != last) {
            if (n < nsteps) steps[n] = t;
            ++n;
            last = t;
            out[0] = t;
        }
    }
}
"""


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    import cupy as cp

    kern = cp.RawKernel(SOURCE, "clock_spin")
    mem_out = cp.cuda.alloc_pinned_memory(8)
    mem_stop = cp.cuda.alloc_pinned_memory(4)
    out = np.frombuffer(mem_out, np.uint64, 1)
    stop = np.frombuffer(mem_stop, np.int32, 1)
    out[0] = 0
    stop[0] = 0
    nsteps = 1 << 16
    steps = cp.zeros(nsteps, cp.uint64)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        kern((1,), (1,), (mem_out.ptr, mem_stop.ptr, steps, np.int32(nsteps)))
    while out[0] == 0:
        pass
    samples = []  # (host before, device value, host after)
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        t0 = time.time_ns()
        d = int(out[0])
        t1 = time.time_ns()
        samples.append((t0, d, t1))
    stop[0] = 1
    stream.synchronize()
    s = np.array(samples, np.int64)
    dev_steps = np.diff(cp.asnumpy(steps).astype(np.int64))
    dev_steps = dev_steps[dev_steps > 0]
    # Offset bounds per sample: host - device in [t0 - d - tick, t1 - d]; the tightest
    # upper bound per tenth of the run.
    tick = int(np.median(dev_steps))
    upper = s[:, 2] - s[:, 1]
    lower = s[:, 0] - s[:, 1] - tick
    parts = np.array_split(np.arange(len(s)), 10)
    tenths = [{"at_s": float((s[p[0], 0] - s[0, 0]) / 1e9),
               "offset_upper_ns": int(upper[p].min()),
               "offset_lower_ns": int(lower[p].max())} for p in parts]  # fmt: skip
    first, last = tenths[0], tenths[-1]
    span_s = last["at_s"] - first["at_s"]
    report = {
        "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
        "samples": len(s),
        "host_read_ns_p50": float(np.median(s[:, 2] - s[:, 0])),
        "tick_ns_p50": tick,
        "tick_ns_min": int(dev_steps.min()),
        "tick_ns_max": int(dev_steps.max()),
        "tick_ns_quantiles": [int(q) for q in np.percentile(dev_steps, [1, 10, 50, 90, 99])],
        "tenths": tenths,
        "drift_ppm": (last["offset_upper_ns"] - first["offset_upper_ns"]) / (span_s * 1e3)
        if span_s > 0
        else None,
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
