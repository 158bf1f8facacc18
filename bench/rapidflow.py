"""Run RapidFlow (the published CPU CSM system; its binary built by you from its public source,
github shixuansun/RapidFlow, outside every commit) on one (graph, query, stream) in CSM files,
with a time limit, and read back its search time and count. A run stopped by its limit prints
partial counts ("Time out"): it is reported as timed out, never as a result. The limit is on
its search only (its ``execute_within_time_limit``): reading and indexing the graph come
first, unbounded (2-3 minutes for a 38.7M-edge graph on the H200 machine's host).

A row can be run several times (``repeat``), as the GPU side's row is the median of several
applies: its time is then the median of the runs' search times. A light row's runs in one
call differ by up to 2x (oracle-github deletion10 Q_1: 0.60-1.22 ms in five runs on the
development host, ``bench/results/rapidflow-runs/``), so one run against a GPU median is not
like with like. Runs stop repeating once one takes ``REPEAT_BELOW_S`` or more (a heavy row's
noise is small beside its time, and its limit would multiply), times out or fails. Between
calls, on different machines, the total moves more (the 22 oracle-github rows took
0.51-0.91 s in sessions 22-26): only a run in the same call compares.

Used by bench/gpu_bench.py and bench/scale_up_bench.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from statistics import median

# A row is run again (up to ``repeat`` times) only while each run's search took less.
REPEAT_BELOW_S = 1.0


class RapidFlow:
    """Runs the RapidFlow binary on the rows of the benchmark: each (graph, query, stream) once
    or, while its runs are short, up to ``repeat`` times; later asks reuse the result."""

    def __init__(self, binary: Path | None, limit: int, repeat: int = 1) -> None:
        self.binary, self.limit, self.repeat = binary, limit, max(1, repeat)
        self._done: dict[tuple[Path, Path, Path], dict] = {}

    def run(self, graph: Path, query: Path, stream: Path) -> dict:
        """{seconds (None unless it finished; the median over its runs), seconds_each,
        matches, timed_out, failed} for one row."""
        if self.binary is None:
            return {"seconds": None, "seconds_each": [], "matches": None, "timed_out": False,
                    "failed": "not run"}  # fmt: skip
        key = (graph, query, stream)
        if key not in self._done:
            self._done[key] = self._repeated(graph, query, stream)
        return self._done[key]

    def _repeated(self, graph: Path, query: Path, stream: Path) -> dict:
        runs = [self._run(graph, query, stream)]
        while (len(runs) < self.repeat and runs[-1]["seconds"] is not None
               and runs[-1]["seconds"] < REPEAT_BELOW_S):  # fmt: skip
            runs.append(self._run(graph, query, stream))
        last = runs[-1]
        each = [r["seconds"] for r in runs]
        if None in each:  # the last run timed out or failed: the row is that run's
            return {**last, "seconds_each": each}
        counts = {r["matches"] for r in runs}
        if len(counts) != 1:
            return {**last, "seconds": None, "seconds_each": each,
                    "failed": f"its runs counted differently: {sorted(counts)}"}  # fmt: skip
        return {**last, "seconds": median(each), "seconds_each": each}

    def _run(self, graph: Path, query: Path, stream: Path) -> dict:
        assert self.binary is not None
        cmd = [str(self.binary), "-d", str(graph), "-q", str(query), "-u", str(stream),
               "-num", "MAX", "-time_limit", str(self.limit)]  # fmt: skip
        # Its shared library (libgraph.so) travels beside the binary.
        env = {**os.environ, "LD_LIBRARY_PATH": str(self.binary.parent)}
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, env=env,
                                 timeout=self.limit * 3 + 60)  # fmt: skip
        except subprocess.TimeoutExpired:
            return {"seconds": None, "matches": None, "timed_out": True, "failed": None}
        out = run.stdout
        search = re.search(r"Search time \(seconds\): ([0-9.]+)", out)
        count = re.search(r"Result count: (\d+)", out)
        timed_out = "Time out" in out
        failed = None if search else f"exit {run.returncode}: {(run.stderr or out)[-300:]!r}"
        return {
            "seconds": None if timed_out or not search else float(search.group(1)),
            "matches": int(count.group(1)) if count else None,
            "timed_out": timed_out,
            "failed": failed,
        }

    def fields(self, graph: Path, query: Path, stream: Path, ours: int) -> dict:
        """The row's same-host fields, with the count check."""
        r = self.run(graph, query, stream)
        return {
            "rapidflow_same_host_s": r["seconds"],
            "rapidflow_same_host_each_s": r["seconds_each"],
            "rapidflow_same_host_matches": r["matches"],
            "rapidflow_timed_out": r["timed_out"],
            "rapidflow_failed": r["failed"],
            "rapidflow_counts_equal": None if r["seconds"] is None else r["matches"] == ours,
        }
