"""Wire schemas: valid documents convert to the core types, every invalid one is refused
with a message that names the offending field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from dcsm.model import ANY_LABEL, MAX_VERTEX_ID, Pattern
from dcsm.schemas import EdgeUpdate, MatchDelta, QuerySpec, field_path, one_line, to_batch


def tri(**extra: object) -> dict:
    doc = {
        "name": "tri",
        "vertices": [{"id": 0, "label": 1}, {"id": 1}, {"id": 2, "label": None}],
        "edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2, "label": 3}, {"u": 2, "v": 0}],
    }
    doc.update(extra)
    return doc


def refused(model: type, doc: dict) -> str:
    """The one-line description of why ``doc`` is refused."""
    with pytest.raises(ValidationError) as info:
        model.model_validate(doc)
    return one_line(info.value)


def test_query_spec_to_pattern_and_back() -> None:
    p = QuerySpec.model_validate(tri()).to_pattern()
    assert p.name == "tri" and not p.distinct
    assert p.vlabels.tolist() == [1, ANY_LABEL, ANY_LABEL]
    assert p.edges.tolist() == [[0, 1], [1, 2], [0, 2]]
    assert p.elabels.tolist() == [ANY_LABEL, 3, ANY_LABEL]
    back = QuerySpec.from_pattern(p)
    assert back.to_pattern().edges.tolist() == p.edges.tolist()
    assert json.loads(back.model_dump_json())["vertices"][0] == {"id": 0, "label": 1}


def test_query_spec_distinct_and_vertex_order() -> None:
    doc = tri(distinct=True)
    doc["vertices"] = [{"id": 2}, {"id": 0}, {"id": 1}]  # any order, labels all wildcards
    doc["edges"] = [{"u": 0, "v": 1}, {"u": 1, "v": 2}, {"u": 2, "v": 0}]
    p = QuerySpec.model_validate(doc).to_pattern()
    assert p.distinct and p.num_vertices == 3


QUERY_ERRORS = [
    # (change to the document, exact one-line message)
    (
        {"vertices": [{"id": i} for i in range(4)], "edges": [{"u": 0, "v": 1}, {"u": 2, "v": 3}]},
        "edges: the pattern is disconnected: vertices [2, 3] are not reachable from 0",
    ),
    (
        {"edges": [{"u": 0, "v": 1}, {"u": 1, "v": 1}]},
        "edges[1]: self loop on vertex 1",
    ),
    (
        {"edges": [{"u": 0, "v": 1}, {"u": 1, "v": 2}, {"u": 1, "v": 0}]},
        "edges[2]: duplicate of edges[0] (0-1)",
    ),
    (
        {"edges": [{"u": 0, "v": 1}, {"u": 1, "v": 7}]},
        "edges[1].v: vertex 7 is not declared (ids are 0..2)",
    ),
    (
        {"vertices": [{"id": 0}, {"id": 2}, {"id": 3}]},
        "vertices: ids must be 0..2, each declared once; got [0, 2, 3]",
    ),
    (
        {"vertices": [{"id": 0}, {"id": 1}, {"id": 1}]},
        "vertices: ids must be 0..2, each declared once; got [0, 1, 1]",
    ),
    (
        {
            "vertices": [{"id": i} for i in range(17)],
            "edges": [{"u": i, "v": i + 1} for i in range(16)],
        },
        "vertices: List should have at most 16 items after validation, not 17",
    ),
    (
        {"vertices": [{"id": 0}]},
        "vertices: List should have at least 2 items after validation, not 1",
    ),
    ({"edges": []}, "edges: List should have at least 1 item after validation, not 0"),
    ({"colour": "red"}, "colour: Extra inputs are not permitted"),
    (
        {"vertices": [{"id": 0, "lbl": 1}, {"id": 1}, {"id": 2}]},
        "vertices[0].lbl: Extra inputs are not permitted",
    ),
    (
        {"edges": [{"u": 0, "v": 1, "weight": 2}, {"u": 1, "v": 2}]},
        "edges[0].weight: Extra inputs are not permitted",
    ),
    ({"name": "a b"}, "name: String should match pattern '^[A-Za-z0-9_.~-]{1,128}$'"),
    ({"name": ""}, "name: String should match pattern '^[A-Za-z0-9_.~-]{1,128}$'"),
    ({"name": "x" * 129}, "name: String should match pattern '^[A-Za-z0-9_.~-]{1,128}$'"),
    ({"name": "tri/../../etc"}, "name: String should match pattern '^[A-Za-z0-9_.~-]{1,128}$'"),
    ({"name": 5}, "name: Input should be a valid string"),
    (
        {"vertices": [{"id": 0, "label": -2}, {"id": 1}, {"id": 2}]},
        "vertices[0].label: Input should be greater than or equal to 0",
    ),
    (
        {"edges": [{"u": 0, "v": 1, "label": 2**31}, {"u": 1, "v": 2}]},
        "edges[0].label: Input should be less than or equal to 2147483647",
    ),
    ({"edges": [{"u": -1, "v": 1}]}, "edges[0].u: Input should be greater than or equal to 0"),
    ({"distinct": "maybe"}, "distinct: Input should be a valid boolean, unable to interpret input"),
]


@pytest.mark.parametrize("change,message", QUERY_ERRORS)
def test_query_spec_errors(change: dict, message: str) -> None:
    assert refused(QuerySpec, tri(**change)) == message


def test_query_spec_missing_fields() -> None:
    doc = tri()
    del doc["edges"], doc["name"]
    assert refused(QuerySpec, doc) == "name: Field required; edges: Field required"


def test_distinct_with_asymmetric_wildcards_is_refused() -> None:
    doc = {
        "name": "e",
        "vertices": [{"id": 0, "label": 1}, {"id": 1}],
        "edges": [{"u": 0, "v": 1}],
        "distinct": True,
    }
    assert refused(QuerySpec, doc).startswith("distinct: a symmetry of this pattern maps")
    doc["distinct"] = False  # embeddings need no representative: fine
    assert QuerySpec.model_validate(doc).to_pattern().num_vertices == 2


def test_json_text_errors() -> None:
    with pytest.raises(ValidationError) as info:
        QuerySpec.model_validate_json('{"name": "x", ')
    assert one_line(info.value).startswith("Invalid JSON")


UPDATE_ERRORS = [
    ({"op": "upsert", "u": 1, "v": 2}, "op: Input should be 'insert' or 'delete'"),
    ({"op": "insert", "u": 3, "v": 3}, "u, v: self loop on vertex 3"),
    ({"op": "insert", "u": -1, "v": 2}, "u: Input should be greater than or equal to 0"),
    (
        {"op": "insert", "u": 1, "v": MAX_VERTEX_ID + 1},
        f"v: Input should be less than or equal to {MAX_VERTEX_ID}",
    ),
    (
        {"op": "delete", "u": 1, "v": 2, "label": -1},
        "label: Input should be greater than or equal to 0",
    ),
    (
        {"op": "insert", "u": 1, "v": 2, "u_label": -3},
        "u_label: Input should be greater than or equal to 0",
    ),
    ({"op": "insert", "u": 1, "v": 2, "weight": 1}, "weight: Extra inputs are not permitted"),
    ({"op": "insert", "u": 1, "v": 2, "ts": float("nan")}, "ts: Input should be a finite number"),
    (
        {"op": "insert", "u": 1, "v": 2, "ts": "later"},
        "ts: Input should be a valid number",
    ),
    ({"u": 1, "v": 2}, "op: Field required"),
]


@pytest.mark.parametrize("doc,message", UPDATE_ERRORS)
def test_edge_update_errors(doc: dict, message: str) -> None:
    assert refused(EdgeUpdate, doc) == message


def test_edge_updates_to_batch() -> None:
    ups = [
        EdgeUpdate(op="insert", u=5, v=9, label=2, u_label=1),
        EdgeUpdate.model_validate_json('{"op": "delete", "u": 9, "v": 5, "ts": 17.5}'),
    ]
    b = to_batch(ups, first_seq=100, arrival=np.array([1.0, 2.0]))
    assert b.seq.tolist() == [100, 101]
    assert b.op.tolist() == [1, -1]
    assert b.u.tolist() == [5, 9] and b.v.tolist() == [9, 5]
    assert b.label.tolist() == [2, 0]
    assert b.u_label.tolist() == [1, ANY_LABEL] and b.v_label.tolist() == [ANY_LABEL, ANY_LABEL]
    assert b.ts.tolist() == [1.0, 2.0]


def test_match_delta() -> None:
    line = '{"query": "tri", "sign": -1, "seq": 12, "match": [4, 2, 9]}'
    d = MatchDelta.model_validate_json(line)
    assert (d.query, d.sign, d.seq, d.match) == ("tri", -1, 12, [4, 2, 9])
    assert json.loads(d.model_dump_json(exclude_none=True)) == json.loads(line)
    assert refused(MatchDelta, {"query": "q", "sign": 0, "seq": 1, "match": []}) == (
        "sign: Input should be 1 or -1"
    )
    assert refused(MatchDelta, {"query": "q", "sign": 1, "seq": -1, "match": []}) == (
        "seq: Input should be greater than or equal to 0"
    )
    assert refused(MatchDelta, {"query": "q", "sign": 1, "seq": 1, "match": [], "x": 1}) == (
        "x: Extra inputs are not permitted"
    )
    assert refused(
        MatchDelta, {"query": "q", "sign": 1, "seq": 1, "match": [], "emitted_ts": float("inf")}
    ) == ("emitted_ts: Input should be a finite number")


def test_field_path() -> None:
    assert field_path(("vertices", 0, "label")) == "vertices[0].label"
    assert field_path(("edges", 3)) == "edges[3]"
    assert field_path(()) == ""


def test_pattern_build_agrees_with_schema() -> None:
    """The core builder and the schema refuse the same things with the same field."""
    from dcsm.errors import PatternError

    with pytest.raises(PatternError) as info:
        Pattern.build("x", [None, None], [(0, 1, None), (0, 1, 2)])
    assert (info.value.field, str(info.value)) == (
        "edges[1]",
        "edges[1]: duplicate of edges[0] (0-1)",
    )
