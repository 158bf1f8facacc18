"""The security options every aiokafka client of the service gets: one dict, built once at
start from the settings, splatted into the ingest consumer, the output producer, the admin
client that creates topics and the consumer that reads committed offsets.

=================  ===============================================================
protocol           adds
=================  ===============================================================
``PLAINTEXT``      nothing (the default; SSL files or SASL credentials are refused)
``SSL``            ``ssl_context`` (CA bundle; client certificate for mutual TLS)
``SASL_PLAINTEXT`` ``sasl_mechanism``, ``sasl_plain_username``/``_password``
``SASL_SSL``       both
=================  ===============================================================

aiokafka takes SCRAM credentials through the ``sasl_plain_*`` arguments too. The SSL
context is :func:`aiokafka.helpers.create_ssl_context`'s: certificate and host name are
always verified, against ``cafile`` or else the system's CAs.
"""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .settings import Settings


def kafka_client_options(
    protocol: str = "PLAINTEXT",
    mechanism: str = "PLAIN",
    username: str | None = None,
    password: str | None = None,
    password_file: str | None = None,
    cafile: str | None = None,
    certfile: str | None = None,
    keyfile: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for AIOKafkaProducer/Consumer/AdminClient; ConfigError (one line)
    for a combination that cannot work or a file that cannot be read."""
    uses_ssl = protocol in ("SSL", "SASL_SSL")
    uses_sasl = protocol in ("SASL_PLAINTEXT", "SASL_SSL")
    if protocol == "PLAINTEXT":
        given = [n for n, v in (("kafka_ssl_cafile", cafile), ("kafka_ssl_certfile", certfile),
                                ("kafka_ssl_keyfile", keyfile), ("kafka_sasl_username", username))
                 if v]  # fmt: skip
        if given:
            raise ConfigError(
                f"{', '.join(given)} set but kafka_security_protocol is PLAINTEXT: choose SSL, "
                "SASL_PLAINTEXT or SASL_SSL"
            )
        return {}
    options: dict[str, Any] = {"security_protocol": protocol}
    if uses_sasl:
        if password_file:
            try:
                lines = Path(password_file).read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise ConfigError(
                    f"cannot read kafka_sasl_password_file {password_file}: {exc.strerror or exc}"
                ) from None
            password = lines[0] if lines else ""
        if not username or not password:
            raise ConfigError(
                f"kafka_security_protocol {protocol} needs kafka_sasl_username and a password "
                "(DCSM_KAFKA_SASL_PASSWORD or kafka_sasl_password_file)"
            )
        options |= {
            "sasl_mechanism": mechanism,
            "sasl_plain_username": username,
            "sasl_plain_password": password,
        }
    if uses_ssl:
        from aiokafka.helpers import create_ssl_context

        if bool(certfile) != bool(keyfile):
            raise ConfigError("kafka_ssl_certfile and kafka_ssl_keyfile go together")
        try:
            options["ssl_context"] = create_ssl_context(
                cafile=cafile, certfile=certfile, keyfile=keyfile
            )
        except (OSError, ssl.SSLError) as exc:
            why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
            files = ", ".join(f for f in (cafile, certfile, keyfile) if f) or "the system CAs"
            raise ConfigError(f"cannot load the Kafka TLS files ({files}): {why}") from None
    elif cafile or certfile or keyfile:
        raise ConfigError(f"kafka_ssl_* files set but kafka_security_protocol is {protocol}")
    return options


def kafka_options_from_settings(settings: Settings) -> dict[str, Any]:
    s = settings
    return kafka_client_options(
        s.kafka_security_protocol, s.kafka_sasl_mechanism, s.kafka_sasl_username,
        s.kafka_sasl_password, s.kafka_sasl_password_file, s.kafka_ssl_cafile,
        s.kafka_ssl_certfile, s.kafka_ssl_keyfile,
    )  # fmt: skip
