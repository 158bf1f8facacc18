"""Which trailing steps of a static plan the GPU counts as a product of candidate counts
(dcsm.gpu.static_match.tail_start; the kernel side is tests/gpu/test_gpu_static.py). Host
only: the plan blob is built without a GPU."""

from __future__ import annotations

from dcsm.gpu.static_match import SP_BNELAB, SP_ELAB, SP_TAIL, SP_VLABEL, device_plan
from dcsm.model import ANY_LABEL, Pattern

TRI = [(0, 1, None), (1, 2, None), (0, 2, None)]


def tail(p: Pattern, elab_one: int | None = None, count: bool = True) -> int:
    return int(device_plan(p, count=count).for_graph(elab_one, count)[SP_TAIL])


def test_pendants_with_different_labels_are_one_tail() -> None:
    # Q_12 of oracle-github: a 5-cycle with three pendants of labels 3, 6 and 0. Counting
    # starts on the cycle, and the pendants, the last three steps, are counted, not walked.
    q12 = Pattern.build(
        "q12",
        [3, 0, 12, 3, 7, 11, 6, 0],
        [(0, 1, 0), (1, 2, 0), (1, 4, 0), (2, 3, 0), (2, 7, 0), (3, 5, 0), (3, 6, 0), (4, 5, 0)],
    )
    assert tail(q12, elab_one=0) == 5
    blob = device_plan(q12, count=True).for_graph(0, True)
    assert sorted(blob[SP_VLABEL + 5 : SP_VLABEL + 8].tolist()) == [0, 3, 6]
    # An edge label is checked per entry: only a graph whose every edge has it lifts it.
    assert tail(q12, elab_one=None) == 8
    assert tail(q12, elab_one=1) == 8
    # Enumeration always walks.
    assert tail(q12, elab_one=0, count=False) == 8


def test_what_stops_a_tail() -> None:
    tri_tails = [*TRI, (0, 3, None), (1, 4, None), (2, 5, None)]
    assert tail(Pattern.build("t", [None, None, None, 0, 1, 2], tri_tails)) == 3
    # Two pendants that could take the same vertex are never both in the tail.
    same = Pattern.build("t", [None, None, None, 0, 0, 2], tri_tails)
    blob = device_plan(same, count=True).for_graph(None, True)
    t = int(blob[SP_TAIL])
    labels = blob[SP_VLABEL + t : SP_VLABEL + 6].tolist()
    assert 3 < t < 6 and sorted(labels) == sorted(set(labels))
    # A clique closes every step: no tail.
    assert tail(Pattern.build("tri", [None] * 3, TRI)) == 3
    # A star's leaves are symmetric: the constraint between the last two leaves keeps the
    # last one alone (its constraint against an earlier leaf only narrows a range).
    star = Pattern.build("s", [0, None, None, None], [(0, 1, None), (0, 2, None), (0, 3, None)])
    assert tail(star) == 3
    # A path of two edges: its last step is a leaf from the start edge.
    assert tail(Pattern.build("w", [None] * 3, [(0, 1, None), (1, 2, None)])) == 2


def test_one_edge_label_becomes_any() -> None:
    p = Pattern.build("lt", [None] * 3, [(0, 1, 4), (1, 2, 4), (0, 2, 5)])
    dp = device_plan(p, count=True)
    blob = dp.for_graph(4, True)
    labels = set(blob[SP_BNELAB : SP_BNELAB + 256].tolist()) | {int(blob[SP_ELAB])}
    assert 4 not in labels and ANY_LABEL in labels and 5 in labels
    assert (dp.for_graph(None, True)[SP_BNELAB:] == dp.blob[SP_BNELAB:])[:-1].all()
