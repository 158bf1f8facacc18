"""The compiled JSON scanner takes only records the exact parser would accept as they are,
and reads them exactly as it does; everything else falls through to the exact parser."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dcsm.schemas import EdgeUpdate, to_batch
from dcsm.service.codec import decode_record
from dcsm.service.jsonscan import scan_updates

COLUMNS = ("op", "u", "v", "label", "u_label", "v_label", "ts")

ACCEPTED = [
    b'{"op":"insert","u":1,"v":2}',
    b' [ {"op" : "delete", "u":10,"v":2, "ts": 1732280000.123456} ] ',
    b'[{"op":"insert","u":1,"v":2,"u_label":null,"v_label":7,"label":3,"ts":null}]',
    b'[{"op":"insert","u":9223372036854775,"v":0,"u_label":2147483647}]',
    b"[]",
]

REFUSED = [
    b'{"op":"insert","u":1,"v":1}',  # self loop
    b'{"op":"insert","u":1.0,"v":2}',  # a float where an int belongs
    b'{"op":"insert","u":1e3,"v":2}',
    b'{"op":"insert","u":-1,"v":2}',
    b'{"op":"insert","u":01,"v":2}',
    b'{"op":"insert","u":1,"v":2,"extra":1}',
    b'{"op":"insert","u":1,"u":3,"v":2}',  # a repeated key
    b'{"op":"ins\\u0065rt","u":1,"v":2}',  # an escape
    b'{"op":"upsert","u":1,"v":2}',
    b'{"op":"insert","u":1,"v":2,"label":2147483648}',
    b'{"op":"insert","u":1,"v":2}x',
    b'{"op":"insert","v":2}',
    b'[{"op":"insert","u":1,"v":2},]',
]


def exact(value: bytes) -> dict[str, list]:
    obj = json.loads(value)
    items = [obj] if isinstance(obj, dict) else obj
    updates = [EdgeUpdate.model_validate(x) for x in items]
    batch = to_batch(updates, 0, np.array([x.ts or 0.0 for x in updates]))
    return {c: getattr(batch, c).tolist() for c in COLUMNS}


@pytest.mark.parametrize("value", ACCEPTED)
def test_the_scanner_reads_what_the_model_reads(value: bytes) -> None:
    got = scan_updates(value, 100)
    assert got is not None
    assert {c: getattr(got, c).tolist() for c in COLUMNS} == exact(value)


@pytest.mark.parametrize("value", REFUSED)
def test_anything_else_goes_to_the_exact_parser(value: bytes) -> None:
    assert scan_updates(value, 100) is None
    dec = decode_record(value, 100)
    assert len(dec) + len(dec.errors) >= 1  # decoded by the model, or an error naming why


def test_more_updates_than_allowed_is_oversize_not_truncated() -> None:
    value = json.dumps([{"op": "insert", "u": i, "v": i + 1} for i in range(5)]).encode()
    assert scan_updates(value, 4) is None
    assert decode_record(value, 4).errors[0].reason == "oversize"
