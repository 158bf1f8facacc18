"""Kafka security settings (service/kafka_security.py): the one dict of aiokafka arguments,
and that it reaches every Kafka client the service creates. No broker: the loopback tansu
has no SASL or TLS, so the clients are stand-ins that record their arguments."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import aiokafka
import aiokafka.admin
import pytest

from dcsm.service.errors import ConfigError
from dcsm.service.kafka_security import kafka_client_options, kafka_options_from_settings
from dcsm.service.settings import Settings

SASL = {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "dcsm", "sasl_plain_password": "s3cret"}  # fmt: skip


def test_plaintext_is_empty_and_refuses_stray_security_settings() -> None:
    assert kafka_client_options() == {}
    with pytest.raises(ConfigError, match="kafka_sasl_username set but .* PLAINTEXT"):
        kafka_client_options(username="dcsm")
    with pytest.raises(ConfigError, match="kafka_ssl_cafile set but .* PLAINTEXT"):
        kafka_client_options(cafile="/etc/ca.pem")


def test_sasl_password_from_setting_env_or_file(tmp_path: Path) -> None:
    opts = kafka_client_options("SASL_PLAINTEXT", "SCRAM-SHA-512", "dcsm", "s3cret")
    assert opts == SASL
    secret = tmp_path / "password"
    secret.write_text("s3cret\n")
    s = Settings.load(
        {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_mechanism": "SCRAM-SHA-512",
         "kafka_sasl_username": "dcsm", "kafka_sasl_password_file": str(secret)}, env={},
    )  # fmt: skip
    assert kafka_options_from_settings(s) == SASL
    s = Settings.load(
        {"kafka_security_protocol": "SASL_PLAINTEXT", "kafka_sasl_username": "dcsm"},
        env={"DCSM_KAFKA_SASL_PASSWORD": "s3cret", "DCSM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512"},
    )
    assert kafka_options_from_settings(s) == SASL
    assert "s3cret" not in repr(s)  # secrets stay out of logs and tracebacks
    with pytest.raises(ConfigError, match="needs kafka_sasl_username and a password"):
        kafka_client_options("SASL_SSL", "PLAIN", "dcsm", None)
    with pytest.raises(ConfigError, match="cannot read kafka_sasl_password_file"):
        kafka_client_options("SASL_PLAINTEXT", "PLAIN", "dcsm", None, str(tmp_path / "nope"))
    with pytest.raises(ConfigError, match="kafka_sasl_mechanism='GSSAPI'"):
        Settings(kafka_sasl_mechanism="GSSAPI")
    with pytest.raises(ConfigError, match="kafka_security_protocol='TLS'"):
        Settings(kafka_security_protocol="TLS")


def test_ssl_context(tmp_path: Path) -> None:
    opts = kafka_client_options("SSL")  # the system CAs
    ctx = opts.pop("ssl_context")
    assert opts == {"security_protocol": "SSL"}
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode == ssl.CERT_REQUIRED
    assert ctx.check_hostname
    opts = kafka_client_options("SASL_SSL", "PLAIN", "dcsm", "s3cret")
    assert isinstance(opts.pop("ssl_context"), ssl.SSLContext)
    assert opts == SASL | {"security_protocol": "SASL_SSL", "sasl_mechanism": "PLAIN"}
    with pytest.raises(ConfigError, match="cannot load the Kafka TLS files"):
        kafka_client_options("SSL", cafile=str(tmp_path / "missing.pem"))
    with pytest.raises(ConfigError, match="go together"):
        kafka_client_options("SSL", certfile=str(tmp_path / "c.pem"))
    with pytest.raises(ConfigError, match="kafka_ssl_\\* files set but .* SASL_PLAINTEXT"):
        kafka_client_options("SASL_PLAINTEXT", "PLAIN", "u", "p", cafile="/etc/ca.pem")


class Recorded(Exception):
    """Raised by a stand-in client once it has recorded its arguments."""


@pytest.fixture
def clients(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, Any]]]:
    seen: dict[str, list[dict[str, Any]]] = {}

    def stand_in(name: str) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            seen.setdefault(name, []).append(kwargs)
            raise Recorded(name)

        return make

    monkeypatch.setattr(aiokafka, "AIOKafkaProducer", stand_in("producer"))
    monkeypatch.setattr(aiokafka, "AIOKafkaConsumer", stand_in("consumer"))
    monkeypatch.setattr(aiokafka.admin, "AIOKafkaAdminClient", stand_in("admin"))
    return seen


async def test_every_client_of_the_service_gets_the_options(
    clients: dict[str, list[dict[str, Any]]], tmp_path: Path
) -> None:
    from dcsm.service.app import Service

    s = Settings(
        kafka="127.0.0.1:1", state_dir=str(tmp_path / "state"), backend="cpu",
        kafka_security_protocol="SASL_PLAINTEXT", kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="dcsm", kafka_sasl_password="s3cret",
    )  # fmt: skip
    service = Service(s)
    assert service.kafka_options == SASL
    assert service.ingest is not None and service.output is not None
    # topic creation (admin client)
    with pytest.raises(Recorded, match="admin"):
        await service.start()
    # the committed-offsets check (a consumer), when topics are not created
    service.settings = s.replace(create_topics=False)
    with pytest.raises(Recorded, match="consumer"):
        await service.start()
    # the output producer and the ingest consumer
    with pytest.raises(Recorded, match="producer"):
        await service.output.start()
    with pytest.raises(Recorded, match="consumer"):
        await service.ingest.start()
    assert [len(clients[k]) for k in ("admin", "consumer", "producer")] == [1, 2, 1]
    for made in clients.values():
        for kwargs in made:
            assert kwargs["bootstrap_servers"] == "127.0.0.1:1"
            assert {k: kwargs.get(k) for k in SASL} == SASL
    await service.worker.stop()
    await asyncio.sleep(0)
