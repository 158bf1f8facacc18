"""Count-mode plans: one per orbit of oriented query edges, weighted by the orbit's size
(dcsm.engine.plan.orbit_plans). The per-update counts this gives are checked against
networkx by test_cpu_properties.test_count_mode_matches_networkx; here, the reduction itself."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dcsm.engine.plan import orbit_plans, plan_query
from dcsm.model import Pattern


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
    ("pattern", "weights"),
    [
        (cycle(3), [6]),  # |Aut| = 6, one orbit of the 6 oriented edges
        (cycle(5), [10]),
        (clique(5), [20]),
        (PATH3, [2, 2]),  # the reflection: (0,1)~(2,1) | (1,0)~(1,2)
        (LABELLED_TRIANGLE, [2, 2, 2]),  # swap 0,1: (0,1)~(1,0) | (1,2)~(0,2) | (2,1)~(2,0)
        (EDGE_LABELLED_C4, [4, 4]),  # label-5 edges | wildcard edges
    ],
)
def test_one_plan_per_orbit(pattern: Pattern, weights: list[int]) -> None:
    full = plan_query(pattern)
    reduced = orbit_plans(full)
    assert sorted(reduced.weight.tolist()) == sorted(weights)
    assert int(reduced.weight.sum()) == full.num_plans == 2 * len(pattern.edges)
    assert reduced.order[0].tolist() == full.order[0].tolist()  # plan 0 always represents
    assert full.weight.tolist() == [1] * full.num_plans


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
