"""StaticSnapshot: slices of root vertices add up to the engine's static matching, and a
snapshot built from an exported graph (what a GPU engine's backfill beside the stream runs
on) matches exactly like the engine's own."""

from __future__ import annotations

from collections import Counter

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.snapshot import StaticSnapshot
from dcsm.loadgen.synth import powerlaw_stream
from dcsm.model import Pattern

PATTERNS = [
    Pattern.build("tri", [None] * 3, [(0, 1, None), (1, 2, None), (0, 2, None)]),
    Pattern.build("wedge", [0, 1, None], [(0, 1, None), (1, 2, None)]),
    Pattern.build(
        "square",
        [None] * 4,
        [(0, 1, None), (1, 2, None), (2, 3, None), (0, 3, None)],
        distinct=True,
    ),  # fmt: skip
]


def rows(m) -> Counter:  # type: ignore[no-untyped-def]
    return Counter(map(tuple, m.tolist()))


def test_slices_and_exported_snapshots_match_like_the_engine() -> None:
    engine = CpuEngine()
    engine.apply(powerlaw_stream(60, 700, num_labels=2, seed=4))
    own = engine.static_snapshot()
    exported = StaticSnapshot.from_graph(engine.export_graph())
    nv = own.num_vertices
    assert exported.num_vertices == nv
    for p in PATTERNS:
        count, matches = engine.count_static(p), engine.match_static(p)
        assert count > 0, p.name
        cuts = [0, nv // 3, nv // 2, nv]
        parts = [own.run(p, lo, hi, emit=True) for lo, hi in zip(cuts, cuts[1:], strict=False)]
        assert sum(n for n, _ in parts) == count, p.name
        assert sum((rows(m) for _, m in parts), Counter()) == rows(matches), p.name
        n, m = exported.run(p, 0, nv, emit=True)
        assert n == count and rows(m) == rows(matches), p.name
        assert exported.run(p, 0, nv, emit=False)[0] == count
        capped, first = own.run(p, 0, nv, emit=True, limit=5)
        assert capped == count and first.tolist() == matches[:5].tolist(), p.name
