"""service/logs.py: the JSON formatter, the Kafka error filter, the connection state."""

from __future__ import annotations

import json
import logging

from dcsm.service import logs
from dcsm.service.metrics import Metrics


def _record(name: str, level: int, msg: str, *args: object, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            import sys

            exc_info = sys.exc_info()
    return logging.LogRecord(name, level, __file__, 1, msg, args, exc_info)


def test_json_formatter_one_object_per_line() -> None:
    line = logs.JsonFormatter().format(_record("dcsm.x", logging.ERROR, "a %s\nb", "c", exc=True))
    assert "\n" not in line
    out = json.loads(line)
    assert out["level"] == "ERROR" and out["logger"] == "dcsm.x" and out["message"] == "a c\nb"
    assert out["time"].endswith("Z") and "ValueError: boom" in out["exc_info"]


def test_kafka_filter_lets_one_line_per_message_per_interval_and_counts() -> None:
    f = logs.KafkaErrorFilter(interval_s=3600)
    before = logs.kafka_error_counts().get("connect", 0)
    msg = "Unable connect to node with id %s: %s"
    passed = [f.filter(_record("aiokafka", logging.ERROR, msg, 1, "refused")) for _ in range(50)]
    assert passed.count(True) == 1 and passed[0]
    assert logs.kafka_error_counts()["connect"] - before == 50
    # Another message, another logger, lower levels and other loggers pass.
    assert f.filter(_record("aiokafka.conn", logging.ERROR, msg, 1, "refused"))
    assert f.filter(_record("aiokafka", logging.ERROR, "Unable to update metadata from %s", 1))
    assert f.filter(_record("aiokafka", logging.INFO, msg, 1, "refused"))
    assert f.filter(_record("dcsm.service", logging.ERROR, msg, 1, "refused"))
    scrape = Metrics().registry.get_sample_value("dcsm_kafka_errors_total", {"kind": "connect"})
    assert scrape is not None and scrape >= 50


def test_kafka_filter_says_how_many_it_held_back() -> None:
    f = logs.KafkaErrorFilter(interval_s=0.0)
    f.interval_s = 3600
    rec = [_record("aiokafka", logging.WARNING, "Got error produce response: %s", "x")]
    assert f.filter(rec[0])
    for _ in range(5):
        assert not f.filter(
            _record("aiokafka", logging.WARNING, "Got error produce response: %s", "x")
        )
    f.interval_s = 0.0
    last = _record("aiokafka", logging.WARNING, "Got error produce response: %s", "x", exc=True)
    assert f.filter(last)
    assert "(5 like it" in last.getMessage() and last.exc_info is None


def test_connection_state_logs_changes_once(caplog) -> None:
    state = logs.ConnectionState("kafka", logging.getLogger("dcsm.test"))
    with caplog.at_level(logging.WARNING, "dcsm.test"):
        for _ in range(20):
            state.failed(ConnectionError("refused"))
        state.ok()
        state.ok()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("kafka unreachable: refused")
    assert "reachable again" in lines[1] and "20 failures" in lines[1]


def test_uvicorn_loggers_share_the_root_format(capsys) -> None:
    import logging.config

    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        logs.configure_logging("info", "json")
        logging.config.dictConfig(logs.uvicorn_log_config("info"))
        logging.getLogger("uvicorn.error").info("hello %s", "there")
        err = capsys.readouterr().err.strip().splitlines()
        out = json.loads(err[-1])
        assert out["logger"] == "uvicorn.error" and out["message"] == "hello there"
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
