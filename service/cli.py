"""``dcsm serve``, ``dcsm demo`` and ``dcsm loadgen``, hooked into the main CLI through
:func:`add_commands`. Heavy imports (fastapi, aiokafka, matplotlib) happen inside the
command functions, so ``dcsm --help`` stays fast."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dcsm.argtypes import number, positive_int, seed, whole
from dcsm.gpu_options import add_gpu_args

from .settings import LOG_LEVELS


def _settings_args(p: argparse.ArgumentParser) -> None:
    """Flags that map one-to-one onto Settings fields (default None: not given)."""
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, help="HTTP port (default 8000)")
    p.add_argument("--kafka", metavar="HOST:PORT", help="Kafka bootstrap; unset: HTTP ingest only")
    p.add_argument("--backend", choices=["auto", "cpu", "gpu"], help="engine (default auto)")
    p.add_argument("--graph", metavar="FILE", help="initial data graph, CSM or SNAP format")
    p.add_argument("--config", metavar="FILE", help="settings file (.toml, .yaml, .json)")
    p.add_argument(
        "--state-dir", metavar="DIR", help="checkpoints and logs (default .dcsm-state; '' none)"
    )
    p.add_argument(
        "--reset-state", action="store_true", default=None,
        help="discard the state directory and start empty from the earliest input offset",
    )  # fmt: skip
    p.add_argument(
        "--on-offset-reset", choices=["stop", "earliest"],
        help="the input topic no longer holds the ingest's position (recreated, truncated): "
        "stop consuming and report it (default), or go on from its earliest offset",
    )  # fmt: skip
    p.add_argument(
        "--input-lease-session-ms", type=int, metavar="MS",
        help="how long a killed owner of the input topic keeps it (default 10000)",
    )  # fmt: skip
    p.add_argument(
        "--replicas", type=int, metavar="N",
        help="replicas of one logical service, each reading the whole input (default 1)",
    )  # fmt: skip
    p.add_argument(
        "--replica-index", type=int, metavar="I", help="this replica's index, 0 to N-1 (default 0)"
    )
    p.add_argument(
        "--shard", choices=["queries", "updates"],
        help="replicas divide the matching by query (default) or by update seq",
    )  # fmt: skip
    p.add_argument(
        "--checkpoint-interval-s", type=float, metavar="S",
        help="longest time between checkpoints (default 30)",
    )  # fmt: skip
    p.add_argument(
        "--checkpoint-interval-updates", type=int, metavar="N",
        help="most updates between checkpoints (default 5000000)",
    )  # fmt: skip
    p.add_argument(
        "--checkpoint-max-pause-share", type=float, metavar="F",
        help="most of the engine's time checkpoint exports may take (default 0.05)",
    )  # fmt: skip
    p.add_argument(
        "--kafka-acks", choices=["all", "1"],
        help="producer acks (default all; 1 for a single broker such as tansu)",
    )  # fmt: skip
    p.add_argument(
        "--matches-encoding", choices=["json", "batch"],
        help="default frame encoding of a query on the matches topic (default json)",
    )  # fmt: skip
    add_gpu_args(p, with_defaults=False)
    p.add_argument(
        "--backfill-mode", choices=["auto", "beside", "inline"],
        help="where ?backfill=true runs: auto (beside the stream on the CPU engine, on the "
        "device inline on the GPU engine), beside (the GPU engine's graph copied to the host "
        "and matched there), inline (the stream waits) (default auto)",
    )  # fmt: skip
    p.add_argument(
        "--backfill-threads", type=int, metavar="N",
        help="threads computing backfills beside the stream (default 0: the cores less two)",
    )  # fmt: skip
    p.add_argument("--updates-topic", help="input topic (default dcsm.updates)")
    p.add_argument("--matches-topic", help="output topic (default dcsm.matches)")
    p.add_argument("--dead-letter-topic", help="dead-letter topic (default dcsm.dead-letter)")
    p.add_argument("--consumer-group", help="Kafka consumer group (default dcsm)")
    p.add_argument("--log-level", choices=LOG_LEVELS)
    p.add_argument(
        "--log-format", choices=["text", "json"],
        help="log lines as text (default) or one JSON object each, uvicorn's included",
    )  # fmt: skip
    p.add_argument(
        "--idempotency-window-s", type=float, metavar="S",
        help="how long an Idempotency-Key is remembered (default 86400)",
    )  # fmt: skip
    _security_args(p)


def _security_args(p: argparse.ArgumentParser) -> None:
    """Access, TLS and Kafka security (service/README.md, "Security")."""
    g = p.add_argument_group("security")
    g.add_argument(
        "--token-read", metavar="TOKEN",
        help="bearer token of the read role (visible in the process list: prefer "
        "DCSM_TOKEN_READ or --token-file)",
    )  # fmt: skip
    g.add_argument(
        "--token-write", metavar="TOKEN",
        help="bearer token of the write role (prefer DCSM_TOKEN_WRITE or --token-file)",
    )  # fmt: skip
    g.add_argument("--token-file", metavar="FILE", help="'ROLE TOKEN' lines (read, write)")
    g.add_argument(
        "--insecure-open", action="store_true", default=None,
        help="serve a non-loopback --host without tokens (anyone who reaches it may write)",
    )  # fmt: skip
    g.add_argument(
        "--open-health", choices=["true", "false"],
        help="/healthz and /readyz without a token (default true)",
    )  # fmt: skip
    g.add_argument(
        "--open-metrics", choices=["true", "false"],
        help="/metrics without a token (default false: a read token)",
    )  # fmt: skip
    g.add_argument(
        "--allowed-origins", metavar="LIST",
        help="comma-separated origins browser websockets may come from ('*': any; default "
        "the service's own)",
    )  # fmt: skip
    g.add_argument("--tls-cert", metavar="FILE", help="PEM certificate: serve HTTPS/WSS")
    g.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    g.add_argument(
        "--kafka-security-protocol", choices=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"],
        help="Kafka security protocol (default PLAINTEXT)",
    )  # fmt: skip
    g.add_argument(
        "--kafka-sasl-mechanism", choices=["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"],
        help="SASL mechanism (default PLAIN)",
    )  # fmt: skip
    g.add_argument("--kafka-sasl-username", metavar="USER", help="SASL user name")
    g.add_argument(
        "--kafka-sasl-password-file", metavar="FILE",
        help="file holding the SASL password (or DCSM_KAFKA_SASL_PASSWORD)",
    )  # fmt: skip
    g.add_argument("--kafka-ssl-cafile", metavar="FILE", help="PEM CA bundle of the brokers")
    g.add_argument("--kafka-ssl-certfile", metavar="FILE", help="PEM client certificate")
    g.add_argument("--kafka-ssl-keyfile", metavar="FILE", help="PEM client private key")


def _fail(message: str) -> int:
    print(f"dcsm: error: {message}", file=sys.stderr)
    return 2


def _logging(level: str, log_format: str = "text") -> None:
    from .logs import configure_logging

    configure_logging(level, log_format)


def cmd_serve(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from dcsm.errors import DcsmError

    from .settings import Settings

    try:
        # Every flag of `dcsm serve` but --config is named after its Settings field.
        given = {f.name: getattr(args, f.name) for f in fields(Settings) if hasattr(args, f.name)}
        settings = Settings.load(given, None, args.config)
        _logging(settings.log_level, settings.log_format)
        from .server import serve

        return serve(settings)
    except DcsmError as exc:
        return _fail(str(exc))


def cmd_demo(args: argparse.Namespace) -> int:
    from dcsm.errors import DcsmError

    try:
        from .demo import run_demo

        return run_demo(args)
    except DcsmError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130


def cmd_loadgen(args: argparse.Namespace) -> int:
    from dcsm.errors import DcsmError

    try:
        from dcsm.loadgen.loadgen import run_loadgen

        return run_loadgen(args)
    except DcsmError as exc:
        return _fail(str(exc))


def add_commands(subparsers: Any) -> None:
    """Add ``serve``, ``demo`` and ``loadgen`` to an argparse subparsers object."""
    from .settings import Settings

    p = subparsers.add_parser(
        "serve",
        help="run the streaming service (HTTP API, websockets, Kafka ingest)",
        description="Run the dcsm service. Every flag is also a DCSM_<NAME> environment "
        "variable and a config-file key; flags win over the environment, which wins over "
        "the file.",
        epilog="settings (environment variables):\n" + Settings.describe(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _settings_args(p)
    p.set_defaults(func=cmd_serve)

    p = subparsers.add_parser(
        "demo",
        help="self-contained demo: loopback broker, service, live matches in the terminal",
    )
    p.add_argument("--broker", metavar="HOST:PORT", help="use this Kafka broker instead of tansu")
    p.add_argument(
        "--graph", metavar="FILE", help="stream this graph's edges instead of a synthetic one"
    )
    p.add_argument("--rate", type=number(0), default=2000.0,
                   help="updates per second (default 2000)")  # fmt: skip
    p.add_argument("--duration", type=number(0), default=20.0,
                   help="seconds to stream (default 20)")  # fmt: skip
    p.add_argument("--vertices", type=whole(3), default=20_000,
                   help="synthetic graph size (default 20000)")  # fmt: skip
    p.add_argument("--labels", type=positive_int, default=3, help="vertex labels (default 3)")
    p.add_argument("--seed", type=seed, default=7, help="generator seed (default 7)")
    p.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    p.add_argument("--backend", choices=["auto", "cpu", "gpu"], default="auto")
    p.add_argument("--plain", action="store_true", help="print lines instead of a live screen")
    p.set_defaults(func=cmd_demo)

    p = subparsers.add_parser(
        "loadgen",
        help="replay a stream into Kafka at target rates; latency/throughput JSON + PNG",
    )
    from dcsm.loadgen.loadgen import add_loadgen_args

    add_loadgen_args(p)
    p.set_defaults(func=cmd_loadgen)
