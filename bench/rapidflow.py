"""Run RapidFlow (the published CPU CSM system; its binary built by you from its public source,
github shixuansun/RapidFlow, outside every commit) on one (graph, query, stream) in CSM files,
with a time limit, and read back its search time and count. A run stopped by its limit prints
partial counts ("Time out"): it is reported as timed out, never as a result.

Used by bench/gpu_bench.py and bench/scale_up_bench.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


class RapidFlow:
    """Runs the RapidFlow binary on the rows of the benchmark (once per query and stream)."""

    def __init__(self, binary: Path | None, limit: int) -> None:
        self.binary, self.limit = binary, limit
        self._done: dict[tuple[Path, Path, Path], dict] = {}

    def run(self, graph: Path, query: Path, stream: Path) -> dict:
        """{seconds (None unless it finished), matches, timed_out, failed} for one row."""
        if self.binary is None:
            return {"seconds": None, "matches": None, "timed_out": False, "failed": "not run"}
        key = (graph, query, stream)
        if key not in self._done:
            self._done[key] = self._run(graph, query, stream)
        return self._done[key]

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
            "rapidflow_same_host_matches": r["matches"],
            "rapidflow_timed_out": r["timed_out"],
            "rapidflow_failed": r["failed"],
            "rapidflow_counts_equal": None if r["seconds"] is None else r["matches"] == ours,
        }
