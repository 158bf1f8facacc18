"""The service's one settings object, built once from defaults, a config file, ``DCSM_*``
environment variables and command-line flags (later sources win).

Every field documents its default and unit. Components never see this object: the app
assembly (:mod:`dcsm.service.app`) hands each one the explicit values it needs.

Config files are TOML (``.toml``), YAML (``.yaml``/``.yml``) or JSON, a flat mapping of the
field names below (dashes or underscores), e.g.::

    port = 8080
    kafka = "127.0.0.1:9092"
    state_dir = "/var/lib/dcsm"

The file is named by ``--config`` or ``DCSM_CONFIG``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from dcsm.gpu_options import GPU_OPTIONS

from .errors import ConfigError

ENV_PREFIX = "DCSM_"
LOG_LEVELS = ("debug", "info", "warning", "error")
# Numeric settings no rule of Settings.__post_init__ bounds otherwise: the least value each
# takes (a queue bound of 0 made every POST wait forever; a negative interval, a timer).
_AT_LEAST = {
    "max_queued_updates": 1, "max_record_updates": 1, "fetch_max_records": 1,
    "ws_queue_frames": 1, "commit_interval_ms": 1, "gpu_max_vertices": 1,
    "output_linger_ms": 0, "fetch_max_wait_ms": 0, "max_engine_batch_updates": 0,
    "gpu_pool_slabs": 0, "gpu_max_versions": 0, "pending_frames": 0, "drain_timeout_s": 0,
}  # fmt: skip
MAX_BACKFILL_THREADS = 1024
KAFKA_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
KAFKA_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def _doc(text: str) -> dict[str, str]:
    return {"doc": text}


def _gpu(name: str) -> Any:
    """The setting ``gpu_<name>``: default and doc from the GPU engine's option table."""
    option = GPU_OPTIONS[name]
    return field(default=option.default, metadata=_doc("GPU engine: " + option.help))


@dataclass(frozen=True)
class Settings:
    host: str = field(default="127.0.0.1", metadata=_doc("HTTP bind address"))
    port: int = field(default=8000, metadata=_doc("HTTP port (0: any free port)"))
    backend: str = field(default="auto", metadata=_doc("engine backend: auto, cpu or gpu"))
    graph: str | None = field(
        default=None, metadata=_doc("initial data graph file (CSM or SNAP); a snapshot wins")
    )
    kafka: str | None = field(
        default=None, metadata=_doc("Kafka bootstrap HOST:PORT; unset: HTTP ingest only")
    )
    updates_topic: str = field(default="dcsm.updates", metadata=_doc("input topic"))
    matches_topic: str = field(default="dcsm.matches", metadata=_doc("output topic of deltas"))
    dead_letter_topic: str = field(
        default="dcsm.dead-letter", metadata=_doc("topic of rejected input records")
    )
    consumer_group: str = field(default="dcsm", metadata=_doc("Kafka consumer group id"))
    create_topics: bool = field(
        default=True, metadata=_doc("create missing topics (1 partition) at start")
    )
    state_dir: str | None = field(
        default=".dcsm-state",
        metadata=_doc(
            "checkpoints, query log and (without Kafka) update log; empty: keep no state "
            "(a restart starts empty)"
        ),
    )
    reset_state: bool = field(
        default=False,
        metadata=_doc(
            "discard the state directory's checkpoints and logs and start empty from the "
            "earliest input offset"
        ),
    )
    on_offset_reset: str = field(
        default="stop",
        metadata=_doc(
            "what the Kafka ingest does when its position is no longer in the input topic "
            "(the topic was recreated or truncated): stop (stop consuming, /readyz not ready, "
            "until restarted with --reset-state or this set to earliest) or earliest (go on "
            "from the earliest offset the topic holds)"
        ),
    )
    input_lease_session_ms: int = field(
        default=10_000,
        metadata=_doc(
            "session timeout of the input lease (ms): how long a killed owner of the input "
            "topic keeps it before another service may take it"
        ),
    )
    replicas: int = field(
        default=1,
        metadata=_doc(
            "replicas of one logical service (service/README.md, Replicas): each reads the "
            "whole input topic and matches its share; more than 1 needs Kafka"
        ),
    )
    replica_index: int = field(default=0, metadata=_doc("this replica's index, 0 to replicas - 1"))
    shard: str = field(
        default="queries",
        metadata=_doc(
            "how replicas divide the matching: queries (each query matched by one replica: "
            "the one its registration names, else the one owning the fewest queries) or "
            "updates (each replica matches every query on the updates whose seq mod replicas "
            "is its index)"
        ),
    )
    checkpoint_interval_s: float = field(
        default=30.0, metadata=_doc("longest time between checkpoints (seconds)")
    )
    checkpoint_interval_updates: int = field(
        default=5_000_000, metadata=_doc("most updates between checkpoints")
    )
    checkpoint_max_pause_share: float = field(
        default=0.05,
        metadata=_doc(
            "most of the engine's time checkpoint exports may take (the data path waits "
            "for an export): after an export of E seconds, the next periodic checkpoint "
            "waits until E / share seconds have passed, even when an interval is due "
            "(1: no bound)"
        ),
    )
    matches_encoding: str = field(
        default="json",
        metadata=_doc(
            "default output encoding of a query on the matches topic: json (a frame per "
            "delta or count) or batch (a frame per engine batch)"
        ),
    )
    kafka_acks: str = field(
        default="all",
        metadata=_doc(
            "acks of the service's producer (output frames, HTTP-ingested updates): all "
            "(nothing acknowledged is lost when a broker fails) or 1 (leader only: enough for "
            "a single broker, and much faster with tansu, the loopback broker)"
        ),
    )
    kafka_request_timeout_ms: int = field(
        default=30_000,
        metadata=_doc(
            "how long the service's producer waits for the broker to take a record before "
            "it counts as lost; a lost output record stops the service without a checkpoint, "
            "and its restart sends it again"
        ),
    )
    output_linger_ms: int = field(
        default=0,
        metadata=_doc(
            "Kafka producer linger for output frames (ms); 0 still batches whatever waits "
            "while a request is in flight"
        ),
    )
    gpu_pool_slabs: int = _gpu("pool_slabs")
    gpu_max_versions: int = _gpu("max_versions")
    gpu_max_vertices: int = _gpu("max_vertices")
    gpu_batch_size: int = _gpu("batch_size")
    gpu_batch_timeout_us: float = _gpu("batch_timeout_us")
    gpu_batch_cap: int = _gpu("batch_cap")
    gpu_small_path: int = _gpu("small_path")
    gpu_maxu: int = _gpu("maxu")
    gpu_tail_div: int = _gpu("tail_div")
    gpu_pool_compact: int = _gpu("pool_compact")
    gpu_hub_bitmaps: int = _gpu("hub_bitmaps")
    gpu_host_threads: int = _gpu("host_threads")
    max_engine_batch_updates: int = field(
        default=0,
        metadata=_doc(
            "most updates the engine applies in one call (0: 32768 on the GPU engine, 8192 "
            "on the CPU engine)"
        ),
    )
    backfill_mode: str = field(
        default="auto",
        metadata=_doc(
            "where backfills run: auto (beside the stream where the engine snapshots its "
            "graph: the CPU engine; inline on the GPU engine's device matcher), beside (also "
            "the GPU engine: its persistent kernel leaves one block slot an SM to a second "
            "device matcher that runs the backfill while updates go on), or inline (on the "
            "engine thread: the stream waits)"
        ),
    )
    backfill_threads: int = field(
        default=0,
        metadata=_doc(
            "threads that compute backfills beside the stream (see backfill_mode; 0: the "
            "cores less two, at least one)"
        ),
    )
    max_record_updates: int = field(
        default=100_000,
        metadata=_doc("most updates in one HTTP request or Kafka record (more: 413/dead letter)"),
    )
    max_queued_updates: int = field(
        default=1_000_000,
        metadata=_doc("updates admitted but not yet fanned out before ingest waits"),
    )
    max_deltas_per_update: int = field(
        default=10_000,
        metadata=_doc(
            "default cap on the deltas an embeddings-mode query ships per update (a query's "
            "own max_deltas_per_update wins); past it, one overflow frame says how many were "
            "not shipped; 0: no cap"
        ),
    )
    ws_queue_frames: int = field(
        default=65_536, metadata=_doc("per-websocket bound on queued frames before gap frames")
    )
    pending_frames: int = field(
        default=10_000,
        metadata=_doc("frames kept for a query's first subscriber until it connects"),
    )
    commit_interval_ms: int = field(
        default=1000, metadata=_doc("how often consumed offsets are committed")
    )
    fetch_max_wait_ms: int = field(
        default=5,
        metadata=_doc(
            "longest a Kafka fetch waits for data (ms); with brokers that answer a waiting "
            "fetch only at its deadline (tansu) this bounds the ingest latency when idle, "
            "and shorter waits cost the broker CPU"
        ),
    )
    fetch_max_records: int = field(default=2000, metadata=_doc("most Kafka records taken per poll"))
    drain_timeout_s: float = field(
        default=30.0, metadata=_doc("how long SIGTERM waits for in-flight work")
    )
    log_level: str = field(default="info", metadata=_doc("uvicorn/dcsm log level"))
    log_format: str = field(
        default="text",
        metadata=_doc("log lines: text, or json (one object per line: time, level, logger, ...)"),
    )
    idempotency_window_s: float = field(
        default=86_400.0,
        metadata=_doc(
            "how long an Idempotency-Key of POST /api/v1/updates is remembered (seconds): a "
            "retry within it gets the first answer"
        ),
    )
    # -- security (service/README.md, "Security") ------------------------------------------
    token_read: str | None = field(
        default=None,
        repr=False,
        metadata=_doc(
            "bearer token of the read role (list, status, subscribe); prefer DCSM_TOKEN_READ "
            "or token_file over a flag, which other users can see in the process list"
        ),
    )
    token_write: str | None = field(
        default=None,
        repr=False,
        metadata=_doc("bearer token of the write role (register, delete, ingest, and all of read)"),
    )
    token_file: str | None = field(
        default=None,
        metadata=_doc("file of 'ROLE TOKEN' lines (roles: read, write; '#' comments)"),
    )
    insecure_open: bool = field(
        default=False,
        metadata=_doc("allow a non-loopback host without tokens: anyone who reaches it may write"),
    )
    open_health: bool = field(
        default=True, metadata=_doc("/healthz and /readyz answer without a token")
    )
    open_metrics: bool = field(
        default=False,
        metadata=_doc("/metrics answers without a token (false: it needs a read token)"),
    )
    allowed_origins: str = field(
        default="",
        metadata=_doc(
            "comma-separated Origin values a browser websocket may come from ('*': any); a "
            "connection without Origin (not a browser) or from the service's own origin passes"
        ),
    )
    tls_cert: str | None = field(
        default=None, metadata=_doc("PEM certificate chain: serve HTTPS and WSS (with tls_key)")
    )
    tls_key: str | None = field(default=None, metadata=_doc("PEM private key of tls_cert"))
    kafka_security_protocol: str = field(
        default="PLAINTEXT",
        metadata=_doc("Kafka security protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
    )
    kafka_sasl_mechanism: str = field(
        default="PLAIN", metadata=_doc("SASL mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
    )
    kafka_sasl_username: str | None = field(default=None, metadata=_doc("SASL user name"))
    kafka_sasl_password: str | None = field(
        default=None,
        repr=False,
        metadata=_doc("SASL password (prefer DCSM_KAFKA_SASL_PASSWORD or the password file)"),
    )
    kafka_sasl_password_file: str | None = field(
        default=None, metadata=_doc("file whose first line is the SASL password")
    )
    kafka_ssl_cafile: str | None = field(
        default=None, metadata=_doc("PEM CA bundle the brokers' certificates must chain to")
    )
    kafka_ssl_certfile: str | None = field(
        default=None, metadata=_doc("PEM client certificate (mutual TLS), with kafka_ssl_keyfile")
    )
    kafka_ssl_keyfile: str | None = field(
        default=None, metadata=_doc("PEM private key of kafka_ssl_certfile (unencrypted)")
    )

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    @property
    def group(self) -> str:
        """The consumer group this process commits to: ``consumer_group``, or
        ``<consumer_group>.<replica_index>`` when there are several replicas (each keeps
        its own offsets and its own input lease)."""
        if self.replicas == 1:
            return self.consumer_group
        return f"{self.consumer_group}.{self.replica_index}"

    @property
    def state_path(self) -> Path | None:
        return Path(self.state_dir) if self.state_dir else None

    def __post_init__(self) -> None:
        for name, least in _AT_LEAST.items():
            if getattr(self, name) < least:
                raise ConfigError(f"{name}={getattr(self, name)}: must be >= {least}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port={self.port}: must be 0 to 65535 (0: any free port)")
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(f"log_level={self.log_level!r}: choose " + ", ".join(LOG_LEVELS))
        if self.backend not in ("auto", "cpu", "gpu"):
            raise ConfigError(f"backend={self.backend!r}: choose auto, cpu or gpu")
        for address in (self.kafka or "").split(","):
            host, colon, port = address.strip().rpartition(":")
            if self.kafka and not (colon and host and port.isdigit() and 0 < int(port) < 65536):
                raise ConfigError(f"kafka={self.kafka!r}: give HOST:PORT (comma-separated)")
        if self.matches_encoding not in ("json", "batch"):
            raise ConfigError(f"matches_encoding={self.matches_encoding!r}: choose json or batch")
        if self.on_offset_reset not in ("stop", "earliest"):
            raise ConfigError(f"on_offset_reset={self.on_offset_reset!r}: choose stop or earliest")
        if self.input_lease_session_ms < 1000:
            raise ConfigError("input_lease_session_ms must be at least 1000")
        if self.replicas < 1 or not 0 <= self.replica_index < self.replicas:
            raise ConfigError(
                f"replica_index={self.replica_index} with replicas={self.replicas}: the index "
                "must be 0 to replicas - 1"
            )
        if self.shard not in ("queries", "updates"):
            raise ConfigError(f"shard={self.shard!r}: choose queries or updates")
        if self.replicas > 1 and not self.kafka:
            raise ConfigError("replicas > 1 needs --kafka: replicas share the input topic")
        if self.log_format not in ("text", "json"):
            raise ConfigError(f"log_format={self.log_format!r}: choose text or json")
        if self.max_deltas_per_update < 0:
            raise ConfigError("max_deltas_per_update must be >= 0 (0: no cap)")
        if self.backfill_mode not in ("auto", "beside", "inline"):
            raise ConfigError(
                f"backfill_mode={self.backfill_mode!r}: choose auto, beside or inline"
            )
        if not 0 <= self.backfill_threads <= MAX_BACKFILL_THREADS:
            raise ConfigError(
                f"backfill_threads must be 0 to {MAX_BACKFILL_THREADS} (0: the cores less two)"
            )
        if self.kafka_request_timeout_ms < 100:
            raise ConfigError(
                f"kafka_request_timeout_ms={self.kafka_request_timeout_ms}: must be >= 100"
            )
        if self.kafka_acks not in ("all", "1"):
            raise ConfigError(f"kafka_acks={self.kafka_acks!r}: choose all or 1")
        if self.checkpoint_interval_s <= 0 or self.checkpoint_interval_updates <= 0:
            raise ConfigError("checkpoint intervals must be positive")
        if not 0 < self.checkpoint_max_pause_share <= 1:
            raise ConfigError(
                f"checkpoint_max_pause_share={self.checkpoint_max_pause_share}: must be in (0, 1]"
            )
        if self.kafka_security_protocol not in KAFKA_SECURITY_PROTOCOLS:
            raise ConfigError(
                f"kafka_security_protocol={self.kafka_security_protocol!r}: choose "
                + ", ".join(KAFKA_SECURITY_PROTOCOLS)
            )
        if self.kafka_sasl_mechanism not in KAFKA_SASL_MECHANISMS:
            raise ConfigError(
                f"kafka_sasl_mechanism={self.kafka_sasl_mechanism!r}: choose "
                + ", ".join(KAFKA_SASL_MECHANISMS)
            )
        if self.idempotency_window_s <= 0:
            raise ConfigError("idempotency_window_s must be positive")
        if not 1 <= self.gpu_batch_size <= self.gpu_batch_cap <= 32768:
            raise ConfigError(
                f"need 1 <= gpu_batch_size <= gpu_batch_cap <= 32768, got {self.gpu_batch_size}"
                f" and {self.gpu_batch_cap}"
            )
        if self.gpu_maxu & (self.gpu_maxu - 1) or self.gpu_maxu < self.gpu_batch_cap:
            raise ConfigError(
                f"gpu_maxu={self.gpu_maxu}: need a power of two >= gpu_batch_cap "
                f"({self.gpu_batch_cap})"
            )
        if self.gpu_batch_timeout_us < 0:
            raise ConfigError("gpu_batch_timeout_us must not be negative")
        if self.gpu_small_path not in (0, 1, 2):
            raise ConfigError(f"gpu_small_path={self.gpu_small_path}: choose 0, 1 or 2")
        if self.gpu_tail_div < 0:
            raise ConfigError(f"gpu_tail_div={self.gpu_tail_div}: must be >= 0")
        if self.gpu_pool_compact not in (0, 1):
            raise ConfigError(f"gpu_pool_compact={self.gpu_pool_compact}: choose 0 or 1")
        if self.gpu_hub_bitmaps < -1:
            raise ConfigError(f"gpu_hub_bitmaps={self.gpu_hub_bitmaps}: must be >= -1")
        if self.gpu_host_threads < -1:
            raise ConfigError(f"gpu_host_threads={self.gpu_host_threads}: must be >= -1")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("tls_cert and tls_key go together: give both or neither")

    @staticmethod
    def load(
        cli: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        config_file: str | None = None,
    ) -> Settings:
        """Defaults < ``config_file`` (or ``$DCSM_CONFIG``) < ``DCSM_*`` env < ``cli``.

        ``cli`` values that are None are treated as not given. Raises ConfigError naming the
        source and the key for an unknown key or a value of the wrong type.
        """
        env = os.environ if env is None else env
        merged: dict[str, Any] = {}
        path = config_file or env.get(ENV_PREFIX + "CONFIG")
        if path:
            merged.update(_coerce_all(_read_file(path), f"config file {path}"))
        from_env = {
            k[len(ENV_PREFIX) :].lower(): v
            for k, v in env.items()
            if k.startswith(ENV_PREFIX) and k != ENV_PREFIX + "CONFIG"
        }
        merged.update(_coerce_all(from_env, "environment DCSM_"))
        merged.update(_coerce_all({k: v for k, v in (cli or {}).items() if v is not None}, "flag"))
        return Settings(**merged)

    @staticmethod
    def describe() -> str:
        """One line per setting: name, env var, default, doc (for --help epilogs)."""
        rows = []
        for f in fields(Settings):
            rows.append(
                f"  {ENV_PREFIX + f.name.upper():32} {f.metadata['doc']} (default {f.default!r})"
            )
        return "\n".join(rows)


_FIELDS = {f.name: f for f in fields(Settings)}


def _read_file(path: str) -> Mapping[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        if path.endswith(".toml"):
            data: Any = tomllib.loads(text)
        elif path.endswith((".yaml", ".yml")):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    except Exception as exc:  # parse errors of three libraries: report them alike
        raise ConfigError(f"config file {path} does not parse: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings")
    return data


def _coerce_all(values: Mapping[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for raw_key, value in values.items():
        key = raw_key.replace("-", "_")
        f = _FIELDS.get(key)
        if f is None:
            if source.startswith("environment"):
                continue  # other DCSM_ variables (e.g. DCSM_DATA) belong to other tools
            raise ConfigError(f"{source}: unknown setting {raw_key!r}")
        out[key] = _coerce(value, f, source)
    return out


def _coerce(value: Any, f: dataclasses.Field, source: str) -> Any:
    kind = str(f.type)
    where = f"{source}: {f.name}={value!r}"
    if kind.startswith("str"):
        if value == "" and "None" in kind:
            return None
        return str(value)
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError  # 1.9 is no count: not truncated to 1
            return int(value)
        if kind == "float":
            x = float(value)
            if not math.isfinite(x):
                raise ValueError  # every float setting is a time or a share
            return x
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{where} is not a valid {kind}") from None
    raise AssertionError(f"unhandled settings type {kind}")
