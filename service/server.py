"""``dcsm serve``: the service under uvicorn, with a SIGTERM/SIGINT that drains the pipeline
(and writes the final checkpoint) before the process exits."""

from __future__ import annotations

import asyncio
import logging
import signal
from types import FrameType
from typing import Any

from .api import create_app
from .app import Service
from .settings import Settings

log = logging.getLogger("dcsm.service")


def serve(settings: Settings) -> int:
    """Run the service until SIGTERM/SIGINT; the process exit code."""
    import uvicorn

    service = Service(settings)
    config = uvicorn.Config(
        create_app(service), host=settings.host, port=settings.port,
        log_level=settings.log_level, lifespan="on", ws="websockets-sansio",
        timeout_graceful_shutdown=5,
    )  # fmt: skip
    make_server(config, service).run()
    return 1 if service.fatal else 0


def make_server(config: Any, service: Service) -> Any:
    """A uvicorn.Server whose first SIGTERM/SIGINT drains the pipeline before exiting (a
    second one exits at once), and which exits when the pipeline cannot start."""
    import uvicorn

    class DrainingServer(uvicorn.Server):
        draining = False
        loop: asyncio.AbstractEventLoop | None = None

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            if self.draining or self.loop is None:
                super().handle_exit(sig, frame)
                return
            self.draining = True
            log.info("%s: draining", signal.Signals(sig).name)
            loop = self.loop
            loop.call_soon_threadsafe(lambda: loop.create_task(self.drain_then_exit()))

        async def drain_then_exit(self) -> None:
            try:
                await service.drain()
            finally:
                self.should_exit = True

        async def serve(self, sockets: Any = None) -> None:
            self.loop = asyncio.get_running_loop()
            await super().serve(sockets)

    server = DrainingServer(config)

    def on_fatal(_: str) -> None:
        server.should_exit = True

    service.on_fatal = on_fatal
    return server
