"""Count-mode plans: one per orbit of oriented query edges, weighted by the orbit's size
(dcsm.engine.plan.orbit_plans), run on either orientation of an update where the orbit holds
the reversed start edge (``flip``). The per-update counts this gives are checked against
networkx by test_cpu_properties.test_count_mode_matches_networkx; here, the reduction itself,
and the flip on a graph whose updates join hubs to leaves."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from dcsm.engine.cpu import CpuEngine
from dcsm.engine.plan import orbit_plans, plan_query
from dcsm.model import Graph, Pattern, UpdateBatch


def cycle(n: int) -> Pattern:
    return Pattern.build(f"c{n}", [None] * n, [(i, (i + 1) % n, None) for i in range(n)])


def clique(n: int) -> Pattern:
    return Pattern.build(
        f"k{n}", [None] * n, [(i, j, None) for i, j in itertools.combinations(range(n), 2)]
    )


PATH3 = Pattern.build("p3", [None] * 3, [(0, 1, None), (1, 2, None)])
LABELLED_TRIANGLE = Pattern.build("lt", [0, 0, 1], [(0, 1, None), (1, 2, None), (0, 2, None)])
EDGE_LABELLED_C4 = Pattern.build(
    "ec4", [None] * 4, [(0, 1, 5), (1, 2, None), (2, 3, 5), (3, 0, None)]
)


@pytest.mark.parametrize(
    ("pattern", "weights", "flips"),
    [
        (cycle(3), [6], [1]),  # |Aut| = 6, one orbit of the 6 oriented edges
        (cycle(5), [10], [1]),
        (clique(5), [20], [1]),
        (PATH3, [2, 2], [0, 0]),  # the reflection: (0,1)~(2,1) | (1,0)~(1,2)
        # swap 0,1: (0,1)~(1,0) | (1,2)~(0,2) | (2,1)~(2,0)
        (LABELLED_TRIANGLE, [2, 2, 2], [1, 0, 0]),
        (EDGE_LABELLED_C4, [4, 4], [1, 1]),  # label-5 edges | wildcard edges
    ],
)
def test_one_plan_per_orbit(pattern: Pattern, weights: list[int], flips: list[int]) -> None:
    full = plan_query(pattern)
    reduced = orbit_plans(full)
    assert sorted(reduced.weight.tolist()) == sorted(weights)
    assert int(reduced.weight.sum()) == full.num_plans == 2 * len(pattern.edges)
    assert reduced.order[0].tolist() == full.order[0].tolist()  # plan 0 always represents
    assert full.weight.tolist() == [1] * full.num_plans
    # flip: the orbit holds the reversed start edge; never without the reduction.
    for p, (x, y) in enumerate(reduced.order[:, :2].tolist()):
        same = full.orbit[_index(full, y, x)] == full.orbit[_index(full, x, y)]
        assert reduced.flip[p] == flips[p] == same
    assert full.flip.tolist() == [0] * full.num_plans


def _index(plan, x: int, y: int) -> int:  # type: ignore[no-untyped-def]
    """The plan of ``plan`` that starts with oriented edge (x, y)."""
    return next(q for q, s in enumerate(plan.order[:, :2].tolist()) if s == [x, y])


def test_flipped_counts_equal_every_plans_count() -> None:
    """Updates between hubs and leaves, counted with one flippable plan (each update run on
    the orientation whose first free step scans the leaf's list) and with every plan: the
    same count for every update, for patterns whose first free step is next to one end."""
    rng = np.random.default_rng(3)
    nv, hubs = 300, 4
    # Each hub joined to a third of the vertices, plus sparse random edges.
    src = np.concatenate([np.repeat(np.arange(hubs), 100), rng.integers(hubs, nv, 400)])
    dst = np.concatenate([rng.choice(np.arange(hubs, nv), 100 * hubs), rng.integers(hubs, nv, 400)])
    graph = Graph(
        vertex_ids=np.arange(nv, dtype=np.int64),
        vertex_labels=rng.integers(0, 2, nv).astype(np.int32),
        src=src.astype(np.int64), dst=dst.astype(np.int64),
        edge_labels=np.zeros(len(src), np.int32),
    )  # fmt: skip
    n = 400
    a = np.where(rng.random(n) < 0.5, rng.integers(0, hubs, n), rng.integers(hubs, nv, n))
    b = rng.integers(hubs, nv, n)
    swap = rng.random(n) < 0.5  # hubs on either side
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    op = np.where(rng.random(n) < 0.7, 1, -1)
    stream = UpdateBatch.from_arrays(op, a, b)
    for pattern in (cycle(4), cycle(5), cycle(6), LABELLED_TRIANGLE):
        assert orbit_plans(plan_query(pattern)).flip.any()
        per = []
        for count_only in (True, False):
            e = CpuEngine(chunk=64)
            e.load_graph(graph)
            e.register(0, pattern, from_seq=0, count_only=count_only)
            r = e.apply(stream)
            e.close()
            if count_only:
                per.append(dict(zip(r.counts.seq.tolist(), r.counts.count.tolist(), strict=True)))
            else:
                per.append(dict(Counter(r.deltas.seq.tolist())))
        assert per[0] == per[1] and sum(per[0].values()) > 0, pattern.name


def test_representatives_are_their_orbits_plans() -> None:
    full = plan_query(LABELLED_TRIANGLE)
    reduced = orbit_plans(full)
    reps = np.nonzero(full.orbit == np.arange(full.num_plans))[0]
    assert reduced.num_plans == len(reps)
    for name in ("order", "vlabel", "bn_pos", "start_elabel"):
        assert np.array_equal(getattr(reduced, name), getattr(full, name)[reps])


def test_distinct_keeps_every_plan() -> None:
    k4 = clique(4)
    full = plan_query(
        Pattern.build(
            "k4", [None] * 4, [tuple(e) + (None,) for e in k4.edges.tolist()], distinct=True
        )
    )
    assert orbit_plans(full) is full


def test_patterns_with_too_many_automorphisms_are_refused_quickly() -> None:
    """An unlabelled 8-clique (40,320 automorphisms) or 10-leaf star (3.6M) is refused in
    well under a second, where listing the group took seconds to minutes while a
    registration waited; a 7-clique (5,040) is planned. Labels that tell the leaves apart
    make the star plannable."""
    import time

    from dcsm.engine.plan import MAX_AUTOMORPHISMS
    from dcsm.errors import PatternError

    def star(labels: list[int | None]) -> Pattern:
        return Pattern.build(
            "star", [None, *labels], [(0, i, None) for i in range(1, len(labels) + 1)]
        )

    assert MAX_AUTOMORPHISMS == 5040
    plan_query(clique(7))
    for pattern in (clique(8), star([None] * 10)):
        t0 = time.perf_counter()
        with pytest.raises(PatternError, match="more than 5,040 automorphisms"):
            plan_query(pattern)
        assert time.perf_counter() - t0 < 5
    plan_query(star(list(range(10))))
