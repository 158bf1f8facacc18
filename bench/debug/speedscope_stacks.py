"""Where one thread's time went in a py-spy speedscope profile (``py-spy record --idle
--threads -f speedscope``), below a given function: the heaviest stacks, in seconds.

    python3 bench/debug/speedscope_stacks.py PROFILE.json[.gz] --thread dcsm-engine \
        --under EngineWorker._control [--top 12]

Without ``--under``, every stack of the thread (its first 12 frames). Each stack is printed
from the ``--under`` frame down, ``name:line`` joined by " > ".
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import sys
from pathlib import Path


def load(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return json.load(fh)


def stacks(profile: dict, thread: str, under: str | None) -> collections.Counter[str]:
    """Seconds per stack of the profile whose name holds ``thread``, cut at ``under``."""
    frames = profile["shared"]["frames"]
    found = [p for p in profile["profiles"] if thread in p["name"]]
    if not found:
        names = ", ".join(p["name"] for p in profile["profiles"])
        raise SystemExit(f"no thread named like {thread!r} (threads: {names})")
    out: collections.Counter[str] = collections.Counter()
    for stack, weight in zip(found[0]["samples"], found[0]["weights"], strict=True):
        names = [frames[i]["name"] for i in stack]
        if under is None:
            start, end = 0, 12
        else:
            hits = [j for j, n in enumerate(names) if under in n]
            if not hits:
                continue
            start, end = hits[0], len(stack)
        key = " > ".join(f"{frames[i]['name']}:{frames[i].get('line', '')}"
                         for i in stack[start:end])  # fmt: skip
        out[key] += weight
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("profile", type=Path)
    ap.add_argument("--thread", required=True, help="part of the thread's name")
    ap.add_argument("--under", default=None, help="part of a function's name")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    got = stacks(load(args.profile), args.thread, args.under)
    print(f"{sum(got.values()):.3f} s in {len(got)} stacks")
    for key, seconds in got.most_common(args.top):
        print(f"{seconds:8.3f}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
