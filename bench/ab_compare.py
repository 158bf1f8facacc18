"""Compare two gpu_bench.json files (a base commit and a new one): every search row's
seconds side by side with the ratio (and each run's ratio to RapidFlow on its own host, where
it ran), totals per dataset and mode, and the response-time rows. Counts must agree row by
row. Seconds compare like with like only when both ran on one host in one call; the RapidFlow
ratios compare across hosts.

    python3 bench/ab_compare.py BASE/gpu_bench.json NEW/gpu_bench.json > README-table.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _key(r: dict) -> tuple[str, str, str, str]:
    return (r["dataset"], r["query"], r["stream"], r["mode"])


def _vs_rapidflow(r: dict) -> str:
    """RapidFlow's same-host seconds over ours, where that run has them."""
    if r.get("rapidflow_timed_out"):
        return "RF timed out"
    rf = r.get("rapidflow_same_host_s")
    return f"{rf / r['seconds']:.2f}x" if rf else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    args = ap.parse_args()
    base, new = (json.loads(p.read_text()) for p in (args.base, args.new))
    before = {_key(r): r for r in base["search"]}
    rows = [(before[_key(r)], r) for r in new["search"] if _key(r) in before]
    for b, n in rows:
        if b["matches"] != n["matches"]:
            raise SystemExit(f"counts differ on {_key(n)}: {b['matches']} vs {n['matches']}")
    print(
        "| dataset | query | stream | mode | matches | base ms | new ms | speed-up | "
        "base / new vs RapidFlow same host |"
    )
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    totals: dict[tuple[str, str], list[float]] = {}
    for b, n in rows:
        vs = f"{_vs_rapidflow(b)} / {_vs_rapidflow(n)}"
        print(f"| {n['dataset']} | {n['query']} | {n['stream']} | {n['mode']} | "
              f"{n['matches']:,} | {b['seconds'] * 1e3:.1f} | {n['seconds'] * 1e3:.1f} | "
              f"{b['seconds'] / n['seconds']:.2f}x | {vs} |")  # fmt: skip
        if n["query"] != "all at once":
            t = totals.setdefault((n["dataset"], n["mode"]), [0.0, 0.0])
            t[0] += b["seconds"]
            t[1] += n["seconds"]
    print("\n| dataset | mode | base s | new s | speed-up |\n|---|---|---:|---:|---:|")
    for (ds, mode), (tb, tn) in totals.items():
        print(f"| {ds} | {mode} | {tb:.4f} | {tn:.4f} | {tb / tn:.2f}x |")
    print("\n| engine | rate | base response p50 / p99 us | new response p50 / p99 us |")
    print("|---|---:|---:|---:|")
    for b, n in zip(base["latency"], new["latency"], strict=False):
        cells = [f"{r['resp_p50_us']:.1f} / {r['resp_p99_us']:.1f}" for r in (b, n)]
        print(f"| {n['engine']} | {n['rate']:.0f} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
