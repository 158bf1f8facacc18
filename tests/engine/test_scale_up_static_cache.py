"""bench/scale_up_bench.py --static-cache: a second run on the same graph, split and patterns
takes its static counts from the file (and still checks its deltas against them); another
split counts them again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rows(tmp: Path, tag: str, *extra: str) -> list[dict]:
    out = tmp / f"{tag}.json"
    subprocess.run(
        [sys.executable, "-P", str(ROOT / "bench/scale_up_bench.py"), "--backend", "cpu",
         "--edges", "20000", "--patterns", "triangle,4cycle", "--static-cache",
         str(tmp / "static.json"), "--out", str(out), *extra],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return json.loads(out.read_text())["rows"]


def test_static_counts_come_from_the_cache_on_a_second_run(tmp_path: Path) -> None:
    first = rows(tmp_path, "first")
    again = rows(tmp_path, "again")
    other = rows(tmp_path, "other", "--seed", "1")
    for a, b, c in zip(first, again, other, strict=True):
        assert a["exact"] is True and b["exact"] is True and c["exact"] is True, (a, b, c)
        assert a["static_count_s"] > 0 and b["static_count_s"] == 0 and c["static_count_s"] > 0
        assert (a["static_from_cache"], b["static_from_cache"], c["static_from_cache"]) == (
            False, True, False)  # fmt: skip
        assert b["static_embeddings_after"] == a["static_embeddings_after"]
        assert c["static_embeddings_after"] != a["static_embeddings_after"]
    assert len(json.loads((tmp_path / "static.json").read_text())) == 4
