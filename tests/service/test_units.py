"""Pure unit tests of the service's small parts (no processes)."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

from dcsm.model import UpdateBatch
from dcsm.service.codec import decode_record, encode_binary, merge
from dcsm.service.errors import ConfigError
from dcsm.service.settings import Settings
from dcsm.service.subscribers import Subscriber


def test_binary_round_trip_and_rejections() -> None:
    b = UpdateBatch.from_arrays(
        np.array([1, -1, 1, 1]), np.array([1, 2, 5, 7]), np.array([2, 3, 5, 9]),
        np.array([0, 3, 0, 1]), u_label=np.array([4, -1, 0, 2]), v_label=np.array([-1, 1, 0, 2]),
    )  # fmt: skip
    raw = bytearray(encode_binary(b))
    dec = decode_record(bytes(raw), 100)
    assert [e.reason for e in dec.errors] == ["self_loop"]
    assert dec.errors[0].index == 2
    got = merge([dec.updates])
    keep = [0, 1, 3]
    assert dec.index.tolist() == keep
    for f in ("op", "u", "v", "label", "u_label", "v_label"):
        assert getattr(got, f).tolist() == getattr(b, f)[keep].tolist(), f
    raw[12] = 5  # op of record 0
    assert decode_record(bytes(raw), 100).errors[0].reason == "unknown_op"
    assert decode_record(bytes(raw[:-3]), 100).errors[0].reason == "malformed"
    assert decode_record(bytes(raw), 2).errors[0].reason == "oversize"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (b"{not json", "malformed"),
        (b"", "malformed"),
        (b"42", "malformed"),
        (b'{"op": "upsert", "u": 1, "v": 2}', "unknown_op"),
        (b'{"op": "insert", "u": 3, "v": 3}', "self_loop"),
        (b'{"op": "insert", "u": -1, "v": 3}', "invalid"),
        (b'{"op": "insert", "u": 1, "v": 3, "colour": 1}', "invalid"),
        (json.dumps([{"op": "insert", "u": 1, "v": 2}] * 6).encode(), "oversize"),
    ],
)
def test_json_record_errors(value: bytes, reason: str) -> None:
    dec = decode_record(value, 5)
    assert len(dec) == 0
    assert [e.reason for e in dec.errors] == [reason]


def test_json_array_keeps_valid_elements() -> None:
    value = json.dumps(
        [{"op": "insert", "u": 1, "v": 2}, {"op": "insert", "u": 2, "v": 2},
         {"op": "delete", "u": 1, "v": 2, "label": 3}, {"op": "nope", "u": 1, "v": 2}]
    ).encode()  # fmt: skip
    dec = decode_record(value, 10)
    assert dec.index.tolist() == [0, 2]
    assert [(e.reason, e.index) for e in dec.errors] == [("self_loop", 1), ("unknown_op", 3)]
    got = merge([dec.updates])
    assert got.op.tolist() == [1, -1] and got.label.tolist() == [0, 3]


async def test_subscriber_gap_frames_mark_exactly_what_was_dropped() -> None:
    sub = Subscriber(3)
    for i in range(10):
        sub.offer(f"f{i}")
    out = [await sub.next() for _ in range(4)]
    assert out == ["f0", "f1", "f2", json.dumps({"type": "gap", "dropped": 7})]
    sub.offer("f10")
    sub.offer("f11")
    for i in range(12, 20):
        sub.offer(f"f{i}")  # f12 fits (3 slots), the rest are dropped
    sub.close('{"type":"end"}')
    rest = []
    while (f := await sub.next()) is not None:
        rest.append(f)
    assert rest == [
        "f10",
        "f11",
        "f12",
        json.dumps({"type": "gap", "dropped": 7}),
        '{"type":"end"}',
    ]
    assert sub.dropped_total == 14


async def test_subscriber_next_waits_for_frames() -> None:
    sub = Subscriber(2)
    task = asyncio.create_task(sub.next())
    await asyncio.sleep(0.01)
    assert not task.done()
    sub.offer("x")
    assert await asyncio.wait_for(task, 1) == "x"


def test_settings_precedence(tmp_path) -> None:
    cfg = tmp_path / "dcsm.toml"
    cfg.write_text('port = 9000\nkafka = "127.0.0.1:1"\nmax-queued-updates = 5\n')
    env = {"DCSM_PORT": "9100", "DCSM_CREATE_TOPICS": "false", "DCSM_OTHER_TOOL": "x"}
    s = Settings.load({"kafka": "127.0.0.1:2", "host": None}, env, str(cfg))
    assert (s.port, s.kafka, s.max_queued_updates, s.create_topics, s.host) == (
        9100, "127.0.0.1:2", 5, False, "127.0.0.1",
    )  # fmt: skip
    assert Settings.load({}, {"DCSM_STATE_DIR": ""}).state_path is None
    gpu = Settings.load({}, {"DCSM_GPU_BATCH_TIMEOUT_US": "125", "DCSM_GPU_SMALL_PATH": "0"})
    assert (gpu.gpu_batch_timeout_us, gpu.gpu_small_path, gpu.gpu_batch_cap) == (125.0, 0, 16384)
    big = Settings.load({}, {"DCSM_GPU_BATCH_CAP": "16384", "DCSM_GPU_MAXU": "32768"})
    assert (big.gpu_batch_cap, big.gpu_maxu, big.gpu_pool_compact) == (16384, 32768, 0)
    assert (big.gpu_tail_div, Settings.load({}, {"DCSM_GPU_TAIL_DIV": "0"}).gpu_tail_div) == (8, 0)


@pytest.mark.parametrize(
    ("env", "text", "fragment"),
    [
        ({"DCSM_PORT": "eighty"}, None, "port='eighty' is not a valid int"),
        ({}, "nonsense = 1\n", "unknown setting 'nonsense'"),
        ({}, "port = [", "does not parse"),
        ({"DCSM_GPU_SMALL_PATH": "3"}, None, "gpu_small_path=3: choose 0, 1 or 2"),
        ({"DCSM_GPU_BATCH_CAP": "40000"}, None, "gpu_batch_cap <= 32768, got 64 and 40000"),
        ({"DCSM_GPU_BATCH_SIZE": "128", "DCSM_GPU_BATCH_CAP": "64"}, None, "got 128 and 64"),
        ({"DCSM_GPU_MAXU": "3000"}, None, "gpu_maxu=3000: need a power of two >= gpu_batch_cap"),
        ({"DCSM_GPU_BATCH_CAP": "16384", "DCSM_GPU_MAXU": "8192"}, None, "(16384)"),
        ({"DCSM_GPU_POOL_COMPACT": "2"}, None, "gpu_pool_compact=2: choose 0 or 1"),
        ({"DCSM_GPU_TAIL_DIV": "-1"}, None, "gpu_tail_div=-1: must be >= 0"),
        # Bounds that a running service once took (a queue bound of 0: every POST waited).
        ({"DCSM_MAX_QUEUED_UPDATES": "0"}, None, "max_queued_updates=0: must be >= 1"),
        ({"DCSM_MAX_RECORD_UPDATES": "0"}, None, "max_record_updates=0: must be >= 1"),
        ({"DCSM_MAX_ENGINE_BATCH_UPDATES": "-1"}, None, "max_engine_batch_updates=-1: must"),
        ({"DCSM_DRAIN_TIMEOUT_S": "-1"}, None, "drain_timeout_s=-1.0: must be >= 0"),
        ({"DCSM_DRAIN_TIMEOUT_S": "nan"}, None, "drain_timeout_s='nan' is not a valid float"),
        ({"DCSM_CHECKPOINT_INTERVAL_S": "inf"}, None, "'inf' is not a valid float"),
        ({"DCSM_GPU_POOL_SLABS": "-5"}, None, "gpu_pool_slabs=-5: must be >= 0"),
        ({"DCSM_PORT": "70000"}, None, "port=70000: must be 0 to 65535"),
        ({"DCSM_LOG_LEVEL": "verbose"}, None, "log_level='verbose': choose debug"),
        ({"DCSM_BACKEND": "tpu"}, None, "backend='tpu': choose auto, cpu or gpu"),
        ({"DCSM_KAFKA": "127.0.0.1:99999"}, None, "kafka='127.0.0.1:99999': give HOST:PORT"),
        ({"DCSM_KAFKA": "localhost"}, None, "give HOST:PORT"),
        ({"DCSM_BACKFILL_THREADS": "100000"}, None, "backfill_threads must be 0 to 1024"),
        ({}, "replicas = 1.9\n", "replicas=1.9 is not a valid int"),
        ({}, "port = 1e400\n", "is not a valid int"),
    ],
)
def test_settings_errors_name_the_key(tmp_path, env, text, fragment) -> None:
    path = None
    if text is not None:
        path = tmp_path / "c.toml"
        path.write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[")):
        Settings.load({}, env, str(path) if path else None)
