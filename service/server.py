"""``dcsm serve``: the service under uvicorn, with a SIGTERM/SIGINT that drains the pipeline
(and writes the final checkpoint) before the process exits. Before anything else it applies
the exposure rule (:func:`dcsm.service.auth.check_exposure`), checks the TLS files and that
the address can be listened on."""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import signal
import socket
import ssl
import threading
from types import FrameType
from typing import Any

from .api import create_app
from .app import STOP_STEP_S, WEBSOCKET_FLUSH_S, Service
from .auth import auth_from_settings, check_exposure
from .errors import ConfigError
from .logs import dump_tasks, uvicorn_log_config
from .settings import Settings

log = logging.getLogger("dcsm.service")


def serve(settings: Settings) -> int:
    """Run the service until SIGTERM/SIGINT; the process exit code."""
    import uvicorn

    s = settings
    auth = auth_from_settings(s)
    access = check_exposure(s.host, auth.tokens, s.insecure_open, tls=bool(s.tls_cert))
    if s.tls_cert and s.tls_key:
        check_tls_files(s.tls_cert, s.tls_key)
    check_listen(s.host, s.port)
    log.info("%s", access)
    service = Service(s)
    config = uvicorn.Config(
        create_app(service, auth), host=s.host, port=s.port,
        log_level=s.log_level, log_config=uvicorn_log_config(s.log_level), lifespan="on",
        ws="websockets-sansio",
        timeout_graceful_shutdown=5, ssl_certfile=s.tls_cert, ssl_keyfile=s.tls_key,
    )  # fmt: skip
    make_server(config, service).run()
    return 1 if service.fatal else 0


def check_tls_files(cert: str, key: str) -> None:
    """ConfigError (one line) unless ``cert`` and ``key`` load as a server certificate."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        why = getattr(exc, "strerror", None) or getattr(exc, "reason", None) or exc
        raise ConfigError(f"cannot load --tls-cert {cert} with --tls-key {key}: {why}") from None


def check_listen(host: str, port: int) -> None:
    """ConfigError (one line) when ``host:port`` cannot be listened on (a port in use, an
    address of no interface here): found before the engine starts, not after its warm-up
    when uvicorn binds. Every address the host resolves to is tried as asyncio's server binds
    it (SO_REUSEADDR; IPv6 only on IPv6 sockets). Port 0 (any free port) is not checked."""
    if port == 0:
        return
    try:
        found = socket.getaddrinfo(
            host or None, port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0, socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    for family, kind, proto, _, address in sorted(set(found)):
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                in_use = exc.errno == errno.EADDRINUSE
                hint = " (another dcsm serve? choose another --port)" if in_use else ""
                raise ConfigError(
                    f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}"
                ) from None


def stop_budget_s(settings: Settings) -> float:
    """Seconds after SIGTERM by which the process has exited: the drain (settle, websocket
    flush, final checkpoint) and each bounded step of :meth:`Service.stop`, with room."""
    return 2 * settings.drain_timeout_s + WEBSOCKET_FLUSH_S + 8 * STOP_STEP_S


def make_server(config: Any, service: Service) -> Any:
    """A uvicorn.Server whose first SIGTERM/SIGINT drains the pipeline before exiting (a
    second one exits at once), and which exits when the pipeline cannot start."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        draining = False
        loop: asyncio.AbstractEventLoop | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.draining:
                # A second signal: no final checkpoint (the last one and the committed offsets
                # stand, as after a crash).
                log.warning("%s again: exiting now", signal.Signals(sig).name)
                logging.shutdown()
                os._exit(128 + sig)
            if self.loop is None:
                super().handle_exit(sig, frame)
                return
            self.draining = True
            log.info("%s: draining", signal.Signals(sig).name)
            loop = self.loop
            watchdog = threading.Timer(stop_budget_s(service.settings), give_up, (loop, sig))
            watchdog.daemon = True
            watchdog.start()
            loop.call_soon_threadsafe(lambda: loop.create_task(self.drain_then_exit()))

        async def drain_then_exit(self) -> None:
            try:
                await service.drain()
            finally:
                self.should_exit = True

        async def serve(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets)

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            # ``--port 0`` binds a free port: the ready line (logged once the engine is warm,
            # well after this) and the status route name the one bound.
            if service.settings.port == 0 and self.servers and self.servers[0].sockets:
                port = int(self.servers[0].sockets[0].getsockname()[1])
                service.settings = dataclasses.replace(service.settings, port=port)

    def give_up(loop: asyncio.AbstractEventLoop, sig: int) -> None:
        # Every step of the stop is bounded; this is the backstop should one still hang.
        log.error(
            "not stopped %.0fs after %s: exiting now; where it hung follows",
            stop_budget_s(service.settings), signal.Signals(sig).name,
        )  # fmt: skip
        dump_tasks(loop)
        logging.shutdown()
        os._exit(1)

    server = DrainingServer(config)

    def on_fatal(_: str) -> None:
        server.should_exit = True

    service.on_fatal = on_fatal
    return server
