"""Placement of queries on replicas (issue 12, service/replicas.py): the pure rule every
replica applies alike when it reads a registration's control record, how a restart keeps or
re-decides the owners of its checkpoint, and the pin's validation. No broker: the pure
functions, a checkpoint file, and one HTTP-only service for the API's answers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import TRI, http_client, spec

from dcsm.loadgen.embedded import ServiceProcess
from dcsm.model import Graph
from dcsm.schemas import QuerySpec
from dcsm.service.checkpoint import Checkpoint
from dcsm.service.errors import ServiceError
from dcsm.service.queries import QueryCatalog, QueryState
from dcsm.service.relay import MatchesRelay
from dcsm.service.replicas import (
    Sharding,
    choose_owner,
    owner_of,
    place_in_order,
    register_record,
)
from dcsm.service.subscribers import Subscriber


def test_least_loaded_lowest_index_on_ties() -> None:
    assert choose_owner([], 3) == 0
    assert choose_owner([0], 3) == 1
    assert choose_owner([0, 1], 3) == 2
    assert choose_owner([0, 1, 2], 3) == 0
    assert choose_owner([1, 1, 2], 3) == 0
    assert choose_owner([0, 0, 2], 3) == 1
    # Owners of another replica set (out of range) or of shard mode updates do not count.
    assert choose_owner([None, 5, 0], 2) == 1


def test_queries_spread_evenly_in_registration_order() -> None:
    assert place_in_order([None] * 4, 2) == [0, 1, 0, 1]
    assert place_in_order([None] * 7, 3) == [0, 1, 2, 0, 1, 2, 0]
    counts = np.bincount(place_in_order([None] * 1000, 7), minlength=7)
    assert counts.max() - counts.min() <= 1


def test_a_pin_wins_and_counts_as_load() -> None:
    assert choose_owner([1, 1, 1], 2, pin=1) == 1, "a pin wins over load"
    # A heavy query pinned to 1: the next unpinned ones go to 0 until 0 has as many.
    assert place_in_order([1, None, None, None], 2) == [1, 0, 0, 1]
    # A pin out of range (a record written for a larger N) is placed by load.
    assert choose_owner([0], 2, pin=2) == 1


def test_sharding_place_and_owns() -> None:
    split = Sharding(2, 1, "queries")
    assert split.place([0, 0, 1], None) == 1
    assert split.owns_query(1) and not split.owns_query(0)
    single = Sharding()
    assert single.place([0, 0], None) == 0 and single.owns_query(0)
    updates = Sharding(2, 0, "updates")
    assert updates.place([], 1) is None, "shard updates: every replica matches it"
    assert updates.owns_query(None) and updates.owns_query(1)


@pytest.mark.parametrize(
    "sharding,pin,reason",
    [
        (Sharding(2, 0, "queries"), 2, "no replica 2: this service has replicas 0..1"),
        (Sharding(3, 0, "queries"), 3, "no replica 3: this service has replicas 0..2"),
        (Sharding(), 1, "no replica 1: this service has replicas 0..0"),
        (Sharding(2, 0, "updates"), 0, "only with --shard queries"),
    ],
)
def test_a_pin_that_names_no_owner_is_a_400(sharding: Sharding, pin: int, reason: str) -> None:
    with pytest.raises(ServiceError) as err:
        sharding.check_pin(pin)
    assert err.value.status == 400 and err.value.code == "invalid_argument"
    assert err.value.details[0]["field"] == "replica"
    assert err.value.details[0]["reason"].startswith(reason)


def test_valid_pins_pass() -> None:
    for sharding, pin in [(Sharding(2, 0, "queries"), 1), (Sharding(), 0), (Sharding(), None)]:
        sharding.check_pin(pin)
    Sharding(2, 0, "updates").check_pin(None)


def test_the_control_record_carries_a_pin_only_when_there_is_one() -> None:
    plain = register_record({"name": "q"}, "count", "json", False, None, 1.0)
    assert b'"replica"' not in plain, "an unpinned record is what it was before"
    assert b'"replica":1' in register_record({"name": "q"}, "count", "json", False, None, 1.0, 1)


def _rows(names: list[str], owners: list[int | None], pins: list[int | None]) -> list[dict]:
    return [
        {"name": n, "qid": i, "replica": o, "pin": p}
        for i, (n, o, p) in enumerate(zip(names, owners, pins, strict=True))
    ]


def test_a_restart_keeps_the_stored_owners() -> None:
    sh = Sharding(2, 0, "queries")
    rows = _rows(["a", "b", "c"], [1, 1, 0], [1, None, None])
    assert sh.restored_owners(rows, sh.placement) == [1, 1, 0], "stored, not recomputed"


def test_a_checkpoint_without_owners_keeps_the_name_hash() -> None:
    sh = Sharding(3, 0, "queries")
    rows = [{"name": f"q{k}", "qid": k} for k in range(12)]
    assert sh.restored_owners(rows, None) == [owner_of(f"q{k}", 3) for k in range(12)]


def test_another_replica_count_re_places_in_qid_order() -> None:
    rows = _rows(["a", "b", "c", "d"], [0, 1, 0, 1], [None, None, 2, None])
    three = Sharding(3, 2, "queries")
    assert three.restored_owners(rows, {"replicas": 2, "shard": "queries"}) == [0, 1, 2, 0]
    two = Sharding(2, 0, "queries")
    # From shard mode updates (no owners): placed as if registered in qid order; the pin
    # 2 is out of range for 2 replicas.
    from_updates = _rows(["a", "b", "c"], [None] * 3, [None, None, 2])
    assert two.restored_owners(from_updates, {"replicas": 2, "shard": "updates"}) == [0, 1, 0]
    assert Sharding(2, 0, "updates").restored_owners(rows, two.placement) == [None] * 4
    assert Sharding().restored_owners(rows, two.placement) == [0] * 4


def _state(name: str, qid: int, replica: int | None) -> QueryState:
    s = QuerySpec.model_validate(spec(TRI, name=name))
    return QueryState(name, qid, s, "count", replica=replica)


def test_queries_being_deleted_do_not_count() -> None:
    catalog = QueryCatalog(16)
    for qid, owner in enumerate([0, 0, 1]):
        catalog.adopt(_state(f"q{qid}", qid, owner))
    assert choose_owner(catalog.owners(), 2) == 1
    catalog.get("q0").closing = True  # its removal waits for the engine; the count does not
    assert sorted(catalog.owners()) == [0, 1]
    assert choose_owner(catalog.owners(), 2) == 0


def test_a_name_being_deleted_is_free_to_a_control_record() -> None:
    """Every replica applies a deletion at the same seq, but removes the query only once its
    own fan-out has the engine's answer: a registration of that name right behind it must
    not depend on which came first."""
    catalog = QueryCatalog(16)
    body = QuerySpec.from_pattern(TRI)
    old = catalog.reserve(body, "embeddings", "json")
    with pytest.raises(ServiceError, match="already exists"):
        catalog.reserve(body, "embeddings", "json", replace_closing=True)
    old.closing = True
    with pytest.raises(ServiceError, match="already exists"):  # the HTTP early answer
        catalog.check_free("tri")
    new = catalog.reserve(body, "count", "json", replace_closing=True)
    assert catalog.get("tri") is new and catalog.by_qid(old.qid) is old
    assert catalog.states() == [old, new], "both, until the old one is removed"
    catalog.remove(old)
    assert catalog.get("tri") is new and catalog.states() == [new] and len(catalog) == 1


def test_the_owner_travels_through_a_checkpoint_file(tmp_path) -> None:
    st = _state("heavy", 4, 1)
    st.pin = 1
    graph = Graph(*(np.zeros(0, t) for t in (np.int64, np.int32, np.int64, np.int64, np.int32)))
    Checkpoint(
        graph, 10, [st.persist()], {}, 0, placement={"replicas": 2, "shard": "queries"}
    ).save(tmp_path)
    ckpt = Checkpoint.latest(tmp_path)
    assert ckpt is not None and ckpt.placement == {"replicas": 2, "shard": "queries"}
    sh = Sharding(2, 0, "queries")
    (owner,) = sh.restored_owners(ckpt.queries, ckpt.placement)
    back = QueryState.restore(ckpt.queries[0], owner)
    assert (back.replica, back.pin) == (1, 1)
    assert back.describe()["replica"] == 1 and back.describe()["pinned"] is True


def test_an_old_checkpoint_without_placement_loads(tmp_path) -> None:
    row = _state("old", 0, 0).persist()
    del row["replica"], row["pin"]
    graph = Graph(*(np.zeros(0, t) for t in (np.int64, np.int32, np.int64, np.int64, np.int32)))
    Checkpoint(graph, 3, [row], {}, 0).save(tmp_path)  # no placement: as before
    ckpt = Checkpoint.latest(tmp_path)
    assert ckpt is not None and ckpt.placement is None
    (owner,) = Sharding(2, 0, "queries").restored_owners(ckpt.queries, ckpt.placement)
    back = QueryState.restore(ckpt.queries[0], owner)
    assert back.replica == owner_of("old", 2) and back.pin is None


async def test_a_single_service_takes_pin_0_only(service: ServiceProcess) -> None:
    async with http_client(service.base_url) as c:
        r = await c.post("/api/v1/queries", json=spec(TRI, name="far", replica=1))
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["code"] == "invalid_argument" and err["details"][0]["field"] == "replica"
        r = await c.post("/api/v1/queries", json=spec(TRI, name="neg", replica=-1))
        assert r.status_code == 422, r.text
        r = await c.post("/api/v1/queries", json=spec(TRI, name="here", replica=0))
        assert r.status_code == 201, r.text
        assert r.json()["replica"] == 0 and r.json()["pinned"] is True
        r = await c.post("/api/v1/queries", json=spec(TRI, name="free"))
        assert r.json()["replica"] == 0 and r.json()["pinned"] is False
        items = (await c.get("/api/v1/queries")).json()["items"]
    assert [(q["name"], q["replica"]) for q in items] == [("free", 0), ("here", 0)]


@pytest.mark.parametrize("mode", ["queries", "updates"])
async def test_the_relay_offers_a_name_taken_again_only_its_own_frames(mode: str) -> None:
    """Frames of a deleted query still on the topic (seq below the new one's from_seq) are
    not offered to the subscribers of the query that took its name."""
    catalog = QueryCatalog(16)
    body = QuerySpec.from_pattern(TRI)
    old = catalog.reserve(body, "embeddings", "json")
    old.closing = True
    new = catalog.reserve(body, "embeddings", "json", replace_closing=True)
    new.live, new.from_seq, new.replica = True, 100, 1  # another replica's (mode queries)
    sub = Subscriber(16)
    new.subscribers.add(sub)
    relay = MatchesRelay("127.0.0.1:9", "matches", catalog, Sharding(2, 0, mode))
    for seq in (97, 99, 101, 103):  # odd: replica 1's share in mode updates
        relay._offer(b"tri", json.dumps({"query": "tri", "seq": seq, "id": str(seq)}).encode())
    relay._offer(b"tri", json.dumps({"type": "deltas", "seq": [105, 107]}).encode())
    got = [json.loads(await sub.next() or "")["seq"] for _ in range(len(sub))]
    assert got == [101, 103, [105, 107]] and relay.relayed == 3
